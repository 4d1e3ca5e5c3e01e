// Reads JSON lines [line, where] on stdin; prints for each where the web client puts the
// line (lines.js kindOf): "game", "notice" or "error".
import { createInterface } from "node:readline";
import { kindOf } from "../../../fibsd/web/static/play/lines.js";

for await (const text of createInterface({ input: process.stdin })) {
  if (!text.trim()) continue;
  const [line, where] = JSON.parse(text);
  process.stdout.write(`${kindOf(line, where)}\n`);
}
