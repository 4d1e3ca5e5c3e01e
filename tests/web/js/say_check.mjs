// Reads a catalog path as argument and server lines on stdin (one JSON string a line);
// prints for each, as JSON, the line as the web client shows it (say.js) in that catalog.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fill, say } from "../../../fibsd/web/static/play/say.js";

const catalog = JSON.parse(readFileSync(process.argv[2], "utf-8"));
const t = (key, values) => fill(catalog, key, values);
for await (const text of createInterface({ input: process.stdin })) {
  if (!text.trim()) continue;
  process.stdout.write(`${JSON.stringify(say(JSON.parse(text), t))}\n`);
}
