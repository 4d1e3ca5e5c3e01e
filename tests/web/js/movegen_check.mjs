// Reads JSON lines {mine, theirs, d1, d2} on stdin; prints for each the sorted list of
// positions the web client's move generator reaches, and the position its forced play
// reaches (null when the roll allows more than one), as JSON [["mine|theirs", ...], forced].
import { createInterface } from "node:readline";
import { apply, forcedPlay, legalResults } from "../../../fibsd/web/static/play/movegen.js";

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const q = JSON.parse(line);
  const results = legalResults(q.mine, q.theirs, q.d1, q.d2)
    .map(([m, t]) => m.join(",") + "|" + t.join(","))
    .sort();
  const forced = forcedPlay(q.mine, q.theirs, q.d1, q.d2);
  let reached = null;
  if (forced) {
    let [m, t] = [q.mine, q.theirs];
    for (const s of forced) [m, t] = apply(m, t, [s.from, s.to]);
    reached = m.join(",") + "|" + t.join(",");
  }
  process.stdout.write(JSON.stringify([results, reached]) + "\n");
}
