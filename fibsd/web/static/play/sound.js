// The client's sounds, made on the spot with Web Audio (no files to fetch): the dice, a
// move, and your turn. Each can be muted; the choice is kept in the browser.

export const KINDS = ["dice", "move", "turn"];
let context = null;

export function isOn(kind) {
  return localStorage.getItem(`fibsd.sound.${kind}`) !== "0";
}

export function setOn(kind, on) {
  localStorage.setItem(`fibsd.sound.${kind}`, on ? "1" : "0");
}

function tone(ctx, at, frequency, length, type, volume) {
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  osc.type = type;
  osc.frequency.value = frequency;
  gain.gain.setValueAtTime(volume, at);
  gain.gain.exponentialRampToValueAtTime(0.001, at + length);
  osc.connect(gain).connect(ctx.destination);
  osc.start(at);
  osc.stop(at + length);
}

const SOUNDS = {
  dice: (ctx, t) => [0, 0.07, 0.12].forEach((d, i) => tone(ctx, t + d, 700 + 250 * i, 0.04, "square", 0.04)),
  move: (ctx, t) => tone(ctx, t, 180, 0.09, "triangle", 0.25),
  turn: (ctx, t) => {
    tone(ctx, t, 660, 0.15, "sine", 0.12);
    tone(ctx, t + 0.15, 880, 0.3, "sine", 0.12);
  },
};

export function play(kind) {
  if (!isOn(kind)) return;
  // The last sounds made, for the tests: headless browsers have no ears.
  const made = (document.body.dataset.sounds || "").split(" ").filter(Boolean).slice(-19);
  document.body.dataset.sounds = [...made, kind].join(" ");
  try {
    context = context || new AudioContext();
    if (context.state === "suspended") context.resume();
    SOUNDS[kind](context, context.currentTime);
  } catch {
    // no audio on this device: silence
  }
}
