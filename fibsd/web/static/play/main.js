// The web client: a CLIP client in the browser. It keeps what the server said (who is
// online, invitations, the last board: line) and draws it; every action is a command
// line sent over the WebSocket, exactly what a FIBS client would send.

import { absoluteText, drawBoard, parseBoard } from "./board.js";
import { login, register } from "./clip.js";
import { diceOf, nextSteps, pips, apply } from "./movegen.js";

const $ = (id) => document.getElementById(id);

const state = {
  conn: null,
  me: "",
  who: new Map(),
  invitations: new Map(),
  view: null,
  play: null, // the move being made: {steps, mine, theirs, dice, rolled, selected}
  offer: "", // a double or resignation the opponent offered us, waiting for our answer
  waiting: false, // we doubled or offered to resign: the opponent must answer
  betweenGames: false,
  matchOver: false,
  lastMove: "",
  motd: false,
  history: [],
  historyAt: 0,
};

// -- logging in ----------------------------------------------------------------------

function showLoginError(text) {
  $("login-error").textContent = text;
}

async function doLogin(event) {
  event.preventDefault();
  const name = $("name").value.trim();
  const password = $("password").value;
  showLoginError("");
  if (!name || !password) {
    showLoginError("Please give a name and a password.");
    return;
  }
  const registering = event.submitter && event.submitter.id === "register";
  try {
    setBusy(true);
    if (registering) await register(name, password);
    state.conn = await login(name, password, onLine, onClosed);
    $("password").value = "";
    $("login-view").hidden = true;
    $("game-view").hidden = false;
    $("logout").hidden = false;
    document.body.dataset.state = "lobby";
  } catch (error) {
    showLoginError(error.message);
  } finally {
    setBusy(false);
  }
}

function setBusy(busy) {
  $("login").disabled = busy;
  $("register").disabled = busy;
}

function onClosed() {
  state.conn = null;
  $("game-view").hidden = true;
  $("login-view").hidden = false;
  $("logout").hidden = true;
  document.body.dataset.state = "login";
  showLoginError("You are logged out.");
  state.who.clear();
  state.invitations.clear();
  state.view = null;
}

function send(line) {
  if (state.conn) state.conn.send(line);
}

// -- what the server says --------------------------------------------------------------

const CHAT = {
  12: (w, t) => [`${w} tells: ${t}`, "tell"],
  13: (w, t) => [`${w} shouts: ${t}`, "shout"],
  14: (w, t) => [`${w} whispers: ${t}`, "kibitz"],
  15: (w, t) => [`${w} kibitzes: ${t}`, "kibitz"],
  16: (w, t) => [`You tell ${w}: ${t}`, "tell mine"],
};
const OWN_CHAT = { 17: "You shout: ", 18: "You whisper: ", 19: "You kibitz: " };

function onLine(line) {
  if (line.startsWith("board:")) {
    onBoard(line);
    return;
  }
  const clip = /^([0-9]+)(?: (.*))?$/.exec(line);
  if (clip) {
    onClip(Number(clip[1]), clip[2] || "");
    return;
  }
  if (state.motd) {
    log(line, "motd");
    return;
  }
  onText(line);
}

function onClip(code, rest) {
  const words = rest.split(" ");
  if (code === 1) {
    state.me = words[0];
    $("me").textContent = state.me;
  } else if (code === 3) {
    state.motd = true;
  } else if (code === 4) {
    state.motd = false;
  } else if (code === 5) {
    const [name, opponent, watching, ready, away, rating, experience] = words;
    state.who.set(name, { name, opponent, watching, ready: ready === "1", away: away === "1",
                          rating: Number(rating), experience: Number(experience) });
  } else if (code === 6) {
    renderWho();
    renderBoard(); // the ratings next to the names
  } else if (code === 7) {
    log(`${words[0]} logs in.`, "presence");
  } else if (code === 8) {
    state.who.delete(words[0]);
    state.invitations.delete(words[0]);
    renderWho();
  } else if (code === 9) {
    log(`Message from ${words[0]}: ${words.slice(2).join(" ")}`, "tell");
  } else if (CHAT[code]) {
    const [text, cls] = CHAT[code](words[0], words.slice(1).join(" "));
    log(text, cls);
  } else if (OWN_CHAT[code]) {
    log(OWN_CHAT[code] + rest, "mine");
  }
}

const INVITATION = /^([A-Za-z_]+) wants to (play a [0-9]+ point match|play an unlimited match|resume a saved match) with you\.$/;
const MOVES = /^([A-Za-z_]+) moves (.*) \.$/;
const OFFER = /^[A-Za-z_]+ (wants to resign\. You will win [0-9]+ points?|doubles|redoubles)\. Type 'accept' or 'reject'\.$/;
const WAIT = /^You (double|redouble|want to resign)/;
const ANSWERED = /^(You|[A-Za-z_]+) (accepts?|rejects?|gives? up)\b/;
const MATCH_END = /^(You win|[A-Za-z_]+ wins) the [0-9]+ point match/;
const STARTS = /^(\*\* You are now playing|\*\* Player [A-Za-z_]+ has joined you|You are now playing with|[A-Za-z_]+ has joined you\.)/;

function onText(line) {
  let found;
  if ((found = INVITATION.exec(line))) {
    state.invitations.set(found[1], found[2]);
    renderWho();
  } else if (line.startsWith("Type 'join ") && line.endsWith("' to accept.")) {
    return;
  } else if (STARTS.test(line)) {
    state.invitations.clear();
    state.matchOver = false;
    state.betweenGames = false;
    state.lastMove = "";
    document.body.dataset.state = "playing";
    renderWho();
  } else if ((found = MOVES.exec(line))) {
    state.lastMove = `${found[1]} moved ${found[2]}`;
  } else if (OFFER.test(line)) {
    state.offer = line;
  } else if (WAIT.test(line)) {
    state.waiting = true;
  } else if (ANSWERED.test(line)) {
    state.offer = "";
    state.waiting = false;
  } else if (line.startsWith("Type 'join' if you want to play the next game")) {
    state.betweenGames = true;
  } else if (MATCH_END.test(line)) {
    state.matchOver = true;
    state.betweenGames = false;
    document.body.dataset.state = "match-over";
  } else if (line.startsWith("You're now watching ")) {
    document.body.dataset.state = "watching";
  }
  if (line === "") return;
  $("message").textContent = line;
  log(line, line.startsWith("** ") ? "error" : "game");
  renderControls();
}

function onBoard(line) {
  const view = parseBoard(line);
  if (!view) return;
  state.view = view;
  state.play = null;
  const mine = view.player === "You";
  if (mine && view.turn === view.colour && view.playerDice[0] && !view.wasDoubled) {
    const rolled = diceOf(view.playerDice[0], view.playerDice[1]);
    state.play = { steps: [], mine: view.mine, theirs: view.theirs, dice: rolled, rolled,
                   selected: null };
  }
  if (view.turn !== 0) state.betweenGames = false;
  else {
    state.offer = "";
    state.waiting = false;
  }
  renderBoard();
}

// -- the board and its moves ---------------------------------------------------------

function options() {
  const play = state.play;
  if (!play) return [];
  return nextSteps(play.mine, play.theirs, play.dice, play.rolled);
}

function renderBoard() {
  const view = state.view;
  $("table").hidden = !view;
  if (!view) return;
  const play = state.play;
  const ui = {};
  if (play) {
    const steps = options();
    ui.mine = play.mine;
    ui.theirs = play.theirs;
    ui.dice = play.dice;
    ui.movable = new Set(steps.map((s) => s.from));
    ui.selected = play.selected;
    ui.dests = new Set(steps.filter((s) => s.from === play.selected).map((s) => s.to));
  }
  drawBoard($("board"), view, ui);
  const me = view.player === "You" ? state.me : view.player;
  const rating = (name) => {
    const entry = state.who.get(name);
    return entry ? entry.rating.toFixed(2) : "";
  };
  const length = view.matchLength === 9999 ? "unlimited" : `${view.matchLength} point match`;
  $("top-name").textContent = `${view.opponent} ${rating(view.opponent)}`;
  $("bottom-name").textContent = `${me} ${rating(me)}`;
  $("top-score").textContent = `${view.opponentScore}`;
  $("bottom-score").textContent = `${view.playerScore}`;
  $("top-pips").textContent = `${pips(ui.theirs || view.theirs)} pips`;
  $("bottom-pips").textContent = `${pips(ui.mine || view.mine)} pips`;
  $("match").textContent = `${length}, cube ${view.cube}`;
  let turn = "";
  if (view.turn === view.colour) turn = view.player === "You" ? "Your turn" : `${me}'s turn`;
  else if (view.turn !== 0) turn = `${view.opponent}'s turn`;
  $("turn").textContent = turn;
  $("last-move").textContent = state.lastMove;
  renderControls();
}

function clickPoint(k) {
  const play = state.play;
  if (!play) return;
  const steps = options();
  if (play.selected !== null) {
    const here = steps.filter((s) => s.from === play.selected && s.to === k);
    if (here.length) {
      const die = Math.min(...here.map((s) => s.die));
      [play.mine, play.theirs] = apply(play.mine, play.theirs, [play.selected, k]);
      play.dice.splice(play.dice.indexOf(die), 1);
      play.steps.push([play.selected, k]);
      play.selected = null;
      if (!options().length) {
        sendMove();
        return;
      }
      renderBoard();
      return;
    }
  }
  play.selected = steps.some((s) => s.from === k) && play.selected !== k ? k : null;
  renderBoard();
  const dest = document.querySelector("#board .dest");
  if (dest) dest.focus();
}

function sendMove() {
  const play = state.play;
  const colour = state.view.colour;
  const words = play.steps.map(([from, to]) => `${absoluteText(from, colour)}-${absoluteText(to, colour)}`);
  send(`move ${words.join(" ")}`);
  state.play = null;
  state.lastMove = `You moved ${words.join(" ")}`;
  renderBoard();
}

function undo() {
  const view = state.view;
  if (!state.play || !view) return;
  const rolled = state.play.rolled;
  state.play = { steps: [], mine: view.mine, theirs: view.theirs, dice: rolled.slice(), rolled,
                 selected: null };
  renderBoard();
}

// -- the buttons -----------------------------------------------------------------------

function renderControls() {
  const view = state.view;
  const playing = !!view && view.player === "You" && !state.matchOver;
  const toRoll = playing && view.turn === view.colour && !view.playerDice[0] && !view.wasDoubled
    && !state.offer && !state.waiting;
  const answer = playing && (view.wasDoubled || !!state.offer);
  $("roll").disabled = !toRoll;
  $("double").disabled = !(toRoll && view.playerMayDouble && view.matchLength !== 1);
  $("accept").disabled = !answer;
  $("reject").disabled = !answer;
  $("undo").disabled = !(state.play && state.play.steps.length);
  $("resign").disabled = !playing || view.turn === 0;
  $("join-next").hidden = !state.betweenGames;
  $("unwatch").hidden = !(view && view.player !== "You" && document.body.dataset.state === "watching");
  document.body.dataset.turn = playing && view.turn === view.colour ? "mine" : "";
}

// -- who is online, invitations ---------------------------------------------------------

function status(entry) {
  if (entry.opponent !== "-") return `playing ${entry.opponent}`;
  if (entry.watching !== "-") return `watching ${entry.watching}`;
  if (entry.away) return "away";
  return entry.ready ? "ready" : "not ready";
}

function button(text, onClick, cls) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (cls) b.className = cls;
  b.addEventListener("click", onClick);
  return b;
}

function renderWho() {
  const body = $("who-rows");
  body.replaceChildren();
  const names = [...state.who.keys()].sort((a, b) => a.localeCompare(b));
  for (const name of names) {
    const entry = state.who.get(name);
    const row = document.createElement("tr");
    row.dataset.name = name;
    for (const text of [name, entry.rating.toFixed(2), String(entry.experience), status(entry)]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.appendChild(cell);
    }
    const actions = document.createElement("td");
    if (name !== state.me) {
      if (entry.opponent === "-") {
        actions.append(button("Invite", () => send(`invite ${name} ${$("length").value}`), "invite"));
        actions.append(button("Resume", () => send(`invite ${name}`), "resume"));
      } else {
        actions.append(button("Watch", () => send(`watch ${name}`), "watch"));
      }
      actions.append(button("Tell", () => {
        $("chat-mode").value = "tell";
        $("chat-to").value = name;
        $("chat-to").hidden = false;
        $("chat-text").focus();
      }, "tell"));
    }
    row.appendChild(actions);
    body.appendChild(row);
  }
  const me = state.who.get(state.me);
  if (me) $("ready").checked = me.ready;
  const list = $("invitations");
  list.replaceChildren();
  for (const [name, what] of state.invitations) {
    const item = document.createElement("li");
    item.dataset.name = name;
    item.append(`${name} wants to ${what}. `);
    item.append(button("Join", () => send(`join ${name}`), "join"));
    list.appendChild(item);
  }
  $("invitations-box").hidden = state.invitations.size === 0;
}

// -- chat and the log -----------------------------------------------------------------

function log(text, cls) {
  const list = $("log");
  const item = document.createElement("li");
  item.textContent = text;
  item.className = cls || "";
  list.appendChild(item);
  while (list.children.length > 500) list.removeChild(list.firstChild);
  list.scrollTop = list.scrollHeight;
}

function doChat(event) {
  event.preventDefault();
  const text = $("chat-text").value.trim();
  if (!text) return;
  const mode = $("chat-mode").value;
  if (mode === "command") send(text);
  else if (mode === "tell") send(`tell ${$("chat-to").value.trim()} ${text}`);
  else send(`${mode} ${text}`);
  state.history.push(text);
  state.historyAt = state.history.length;
  $("chat-text").value = "";
}

function chatKeys(event) {
  if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
  if (!state.history.length) return;
  state.historyAt += event.key === "ArrowUp" ? -1 : 1;
  state.historyAt = Math.max(0, Math.min(state.history.length, state.historyAt));
  $("chat-text").value = state.history[state.historyAt] || "";
  event.preventDefault();
}

// -- keyboard ----------------------------------------------------------------------------

const KEYS = { r: "roll", d: "double", a: "accept", x: "reject", u: "undo", j: "join-next" };

function keys(event) {
  const target = event.target;
  if (target.closest && target.closest("input, select, textarea")) return;
  if (event.key === "Escape" && state.play) {
    state.play.selected = null;
    renderBoard();
    return;
  }
  const point = target.closest && target.closest("#board .point");
  if (point && (event.key === "Enter" || event.key === " ")) {
    clickPoint(Number(point.dataset.point));
    event.preventDefault();
    return;
  }
  const id = KEYS[event.key];
  if (id && !$(id).disabled && !$(id).hidden) $(id).click();
}

// -- wiring --------------------------------------------------------------------------------

function start() {
  $("login-form").addEventListener("submit", doLogin);
  $("logout").addEventListener("click", () => send("bye"));
  $("board").addEventListener("click", (event) => {
    const point = event.target.closest(".point");
    if (point) clickPoint(Number(point.dataset.point));
  });
  $("roll").addEventListener("click", () => send("roll"));
  $("double").addEventListener("click", () => send("double"));
  $("accept").addEventListener("click", () => {
    send("accept");
  });
  $("reject").addEventListener("click", () => {
    send("reject");
  });
  $("undo").addEventListener("click", undo);
  $("resign").addEventListener("click", () => send(`resign ${$("resign-kind").value}`));
  $("join-next").addEventListener("click", () => {
    send("join");
    state.betweenGames = false;
    renderControls();
  });
  $("unwatch").addEventListener("click", () => {
    send("unwatch");
    document.body.dataset.state = "lobby";
  });
  $("ready").addEventListener("change", () => send("toggle ready"));
  $("saved").addEventListener("click", () => send("show saved"));
  $("chat-form").addEventListener("submit", doChat);
  $("chat-text").addEventListener("keydown", chatKeys);
  $("chat-mode").addEventListener("change", () => {
    $("chat-to").hidden = $("chat-mode").value !== "tell";
  });
  document.addEventListener("keydown", keys);
  document.body.dataset.state = "login";
}

start();
