// Prints, for each "protocol hostname" line on stdin, whether /play warns that the
// password travels in clear (clip.js sendsInClear): "true" or "false".
import { createInterface } from "node:readline";
import { sendsInClear } from "../../../fibsd/web/static/play/clip.js";

for await (const line of createInterface({ input: process.stdin })) {
  const [protocol, hostname] = line.split(" ");
  process.stdout.write(`${sendsInClear(protocol, hostname)}\n`);
}
