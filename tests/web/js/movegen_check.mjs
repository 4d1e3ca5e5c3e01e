// Reads JSON lines {mine, theirs, d1, d2} on stdin; prints for each the sorted list of
// positions the web client's move generator reaches, as JSON [[mine, theirs], ...].
import { createInterface } from "node:readline";
import { legalResults } from "../../../fibsd/web/static/play/movegen.js";

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const q = JSON.parse(line);
  const results = legalResults(q.mine, q.theirs, q.d1, q.d2)
    .map(([m, t]) => m.join(",") + "|" + t.join(","))
    .sort();
  process.stdout.write(JSON.stringify(results) + "\n");
}
