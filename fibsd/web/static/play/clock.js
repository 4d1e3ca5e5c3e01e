// A match's clocks on the page (protocol/clock.md): the answer to the `clock` command,
// which the page asks after every board of a match, counted down here between answers.
// Pure: no page, no socket.

const TIME = "((?:[0-9]+:)?[0-9]+:[0-9]{2})";
export const CLOCK_STATE = new RegExp(`^clock: \\S+ ([A-Za-z_]+) ${TIME} ([A-Za-z_]+) ${TIME}$`);
export const CLOCK_RUNNING = new RegExp(`^clock: running for ([A-Za-z_]+), ${TIME} of delay left$`);
export const CLOCK_STOPPED = "clock: stopped";
export const NO_CLOCK = "** This match has no clock.";

// "1:02:03", "13:45" -> seconds.
export function seconds(text) {
  return text.split(":").reduce((total, part) => total * 60 + Number(part), 0);
}

// Seconds -> "m:ss" (or "h:mm:ss"), rounded up as the server shows them.
export function shown(total) {
  const whole = Math.max(0, Math.ceil(total));
  const [h, m, s] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  const two = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

// The clock read from a `clock:` state line at `now` (ms); the running line adds to it.
export function readState(found, now) {
  return { reserves: new Map([[found[1], seconds(found[2])], [found[3], seconds(found[4])]]),
           running: null, at: now };
}

// `name`'s reserve at `now` (ms): his decision's delay first, then the reserve runs.
export function reserveLeft(clock, name, now) {
  const reserve = clock.reserves.get(name);
  if (reserve === undefined) return null;
  if (!clock.running || clock.running.name !== name) return reserve;
  const elapsed = (now - clock.at) / 1000;
  return Math.max(0, reserve - Math.max(0, elapsed - clock.running.delay));
}
