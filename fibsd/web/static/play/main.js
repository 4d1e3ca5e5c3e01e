// The web client: a CLIP client in the browser. It keeps what the server said (who is
// online, invitations, the last board: line) and draws it; every action is a command
// line sent over the WebSocket, exactly what a FIBS client would send.

import { absoluteText, describe, drawBoard, parseBoard } from "./board.js";
import {
  TOKEN_LINE, backoff, forgetToken, keepToken, login, register, savedToken, sendsInClear,
} from "./clip.js";
import { apply, diceOf, forcedPlay, nextSteps, pips } from "./movegen.js";
import { KINDS, isOn, play as sound, setOn } from "./sound.js";
import { animateMove, setSpeed, speedName } from "./animate.js";
import { lang, loadCatalog, t } from "./i18n.js";
import { say } from "./say.js";
import {
  CLOCK_RUNNING, CLOCK_STATE, CLOCK_STOPPED, NO_CLOCK, readState, reserveLeft, seconds, shown,
} from "./clock.js";
import {
  INVITATION, MOVES, OFFER, WAIT, ANSWERED, MATCH_END, STARTS, SAVED, DICE, CANT_MOVE,
  GAME_OVER, GAME_POINTS, SCORE, TO_ROLL, BOARDSTYLE, SAVED_HEADER, SAVED_ROW, ARCHIVE,
  kindOf,
} from "./lines.js";

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
  lastFrom: "game", // where the last command came from: its error is shown there
  restore: [], // commands that give the account back the settings we changed
  quiet: new Set(), // confirmations of our own setting commands, not shown
  settingUp: false, // waiting for the answer to `set boardstyle`
  serverMoves: false, // the account's `automove`: the server plays forced moves itself
  saved: new Map(), // from `show saved`: opponent -> {length, score, online}
  moved: null, // {name, words}: a move line whose board is still to come (animated)
  animating: false, // the board waits for the animation of a move
  archiveQuery: false, // asked `archive` for the match just finished: its number
  savedAsked: false, // the Saved matches button: an empty list is said in the chat
  invitedBy: "", // the sender of the last invitation (a saved match's warning follows it)
  bots: new Map(), // the site's resident bots (/api/bots): name -> their strength
  clock: null, // the match's clocks (clock.js), null: none known
  clockAsked: 0, // `clock` commands sent for the board whose answers are still to come
  noClock: false, // the match has no clock: not asked again until the next one starts
  leaving: false, // we said bye (or were replaced by another login): no reconnecting
  reconnecting: false, // the connection dropped and a token brings us back
};

let TITLE = document.title; // in the page's language once the catalog is loaded
const CONFIRM_KEY = "fibsd.confirm"; // localStorage: "1" = moves wait for Confirm
const NOTIFY_KEY = "fibsd.notify"; // localStorage: "1" = a notification on your turn
const READER_KEY = "fibsd.reader"; // localStorage: "1" = the screen-reader mode

// -- logging in ----------------------------------------------------------------------

// The client's and the server's reasons at login, by catalog key.
const LOGIN_ERRORS = {
  "Wrong name or password.": "login.wrong",
  "The connection to the server was lost.": "login.lost",
  "Minimal password length is 4 characters.": "login.short",
  "Your password may not contain ':'": "login.colon",
  "Your site is not allowed to create new accounts.": "login.site",
};

function showLoginError(text) {
  $("login-error").textContent = LOGIN_ERRORS[text] ? t(LOGIN_ERRORS[text]) : text;
}

async function doLogin(event) {
  event.preventDefault();
  const name = $("name").value.trim();
  const password = $("password").value;
  showLoginError("");
  if (!name || !password) {
    showLoginError(t("login.empty"));
    return;
  }
  const registering = event.submitter && event.submitter.id === "register";
  try {
    setBusy(true);
    if (registering) await register(name, password);
    state.leaving = false;
    state.restore = []; // back after a drop, a page keeps what it changed at its login
    state.conn = await login(name, password, onLine, onClosed);
    $("password").value = "";
    $("login-view").hidden = true;
    $("game-view").hidden = false;
    $("logout").hidden = false;
    document.body.dataset.state = "lobby";
    loadBots();
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

// The connection closed. Dropped without our bye, with a session token of this tab: we
// come back by ourselves (protocol/web.md, "Reconnecting"): the board stays, a line says
// we are reconnecting, and the server resumes the match we were playing.
function onClosed() {
  state.conn = null;
  const saved = savedToken();
  if (saved && !state.leaving) {
    reconnect(saved, 0);
    return;
  }
  forgetToken();
  loggedOut(t("login.out"));
}

function reconnect(saved, tries) {
  state.reconnecting = true;
  $("reconnecting").hidden = false;
  document.body.dataset.reconnecting = "1"; // the buttons wait (play.css)
  setTimeout(async () => {
    if (state.leaving) return;
    try {
      state.who.clear(); // the login sends everyone's `5` line again
      state.conn = await login(saved.name, saved.token, onLine, onClosed, true);
      state.reconnecting = false;
      $("reconnecting").hidden = true;
      delete document.body.dataset.reconnecting;
    } catch (error) {
      if (error.message === "The connection to the server was lost." && !state.leaving) {
        reconnect(saved, tries + 1);
        return;
      }
      forgetToken(); // refused: expired, revoked, ... the password it is
      state.reconnecting = false;
      $("reconnecting").hidden = true;
      delete document.body.dataset.reconnecting;
      loggedOut(t("login.again"));
    }
  }, backoff(tries));
}

function loggedOut(text) {
  state.restore = [];
  $("game-view").hidden = true;
  $("login-view").hidden = false;
  $("logout").hidden = true;
  document.body.dataset.state = "login";
  showLoginError(text);
  state.who.clear();
  state.invitations.clear();
  state.saved.clear();
  state.quiet.clear();
  state.view = null;
  state.play = null;
  state.matchOver = false;
  $("message").textContent = "";
  $("game-log").replaceChildren();
  document.title = TITLE;
}

function send(line) {
  if (state.conn) state.conn.send(line);
}

// A command from the board, its buttons or the lobby: an error goes under the board.
function act(line) {
  state.lastFrom = "game";
  send(line);
}

// -- what the server says --------------------------------------------------------------

const CHAT = {
  12: (name, text) => [t("chat.tells", { name, text }), "tell"],
  13: (name, text) => [t("chat.shouts", { name, text }), "shout"],
  14: (name, text) => [t("chat.whispers", { name, text }), "kibitz"],
  15: (name, text) => [t("chat.kibitzes", { name, text }), "kibitz"],
  16: (name, text) => [t("chat.you_tell", { name, text }), "tell mine"],
};
const OWN_CHAT = { 17: "chat.you_shout", 18: "chat.you_whisper", 19: "chat.you_kibitz" };

// Lines that end this tab's session for good: no reconnecting after them.
const FINAL = new Set(["** You logged in again from another connection; closing this one."]);

function onLine(line) {
  if (line.startsWith(TOKEN_LINE)) { // asked for at login: kept for the tab, not shown
    keepToken(state.me, line.slice(TOKEN_LINE.length));
    return;
  }
  if (FINAL.has(line)) {
    state.leaving = true;
    forgetToken();
  }
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
  } else if (code === 2) {
    state.serverMoves = words[4] === "1";
    forceSettings(words);
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
    log(t("chat.logs_in", { name: words[0] }), "presence");
  } else if (code === 8) {
    state.who.delete(words[0]);
    state.invitations.delete(words[0]);
    renderWho();
  } else if (code === 9) {
    log(t("chat.message", { name: words[0], text: words.slice(2).join(" ") }), "tell");
  } else if (CHAT[code]) {
    const [text, cls] = CHAT[code](words[0], words.slice(1).join(" "));
    log(text, cls);
  } else if (OWN_CHAT[code]) {
    log(t(OWN_CHAT[code], { text: rest }), "mine");
  }
}

function onText(line) {
  let found;
  const where = document.body.dataset.state; // before this line changes it
  if (state.quiet.delete(line)) return; // our own settings at login
  if (state.clockAsked && readClock(line)) return;
  if ((found = BOARDSTYLE.exec(line)) && state.settingUp) {
    state.settingUp = false;
    if (found[1] !== "3") force("set boardstyle 3", `set boardstyle ${found[1]}`,
                               "Value of 'boardstyle' set to 3.");
    document.body.dataset.settings = "forced"; // all asked for: the page has what it needs
    return;
  }
  if (savedLine(line) || archiveLine(line)) return;
  if ((found = INVITATION.exec(line))) {
    state.invitations.set(found[1], found[2]);
    state.invitedBy = found[1];
    renderWho();
  } else if (line.startsWith("WARNING: Don't accept if you want to continue") && state.invitedBy) {
    state.invitations.set(state.invitedBy, `${state.invitations.get(state.invitedBy)}. ${line}`);
    renderWho();
  } else if (line.startsWith("** With a clock: ") && state.invitedBy) {
    state.invitations.set(state.invitedBy, `${state.invitations.get(state.invitedBy)}. ${line.slice(3)}`);
    renderWho();
  } else if (line.startsWith("Type 'join ") && line.endsWith("' to accept.")) {
    return;
  } else if (STARTS.test(line)) {
    state.clock = null;
    state.noClock = false;
    state.invitations.clear();
    state.matchOver = false;
    state.betweenGames = false;
    state.lastMove = "";
    $("game-log").replaceChildren();
    $("replay").hidden = true;
    document.body.dataset.state = "playing";
    renderWho();
  } else if ((found = MOVES.exec(line))) {
    state.lastMove = t("board.moved", { name: found[1], move: found[2] });
    state.moved = { name: found[1], words: found[2].split(" ") };
  } else if (OFFER.test(line)) {
    state.offer = line;
  } else if (WAIT.test(line)) {
    state.waiting = true;
  } else if (ANSWERED.test(line)) {
    state.offer = "";
    state.waiting = false;
    if (GAME_OVER.test(line)) turnTo(0);
  } else if (line.startsWith("Type 'join' if you want to play the next game")) {
    state.betweenGames = true;
  } else if (MATCH_END.test(line)) {
    state.matchOver = true;
    state.betweenGames = false;
    document.body.dataset.state = "match-over";
    matchScore(SCORE.exec(line));
    askArchive();
    send("show saved");
  } else if (SAVED.test(line) && document.body.dataset.state === "playing") {
    state.matchOver = true;
    document.body.dataset.state = "lobby";
    turnTo(0);
    send("show saved");
  } else if (GAME_OVER.test(line)) {
    gamePoints(GAME_POINTS.exec(line));
    turnTo(0);
  } else if (line.endsWith("You're not watching anymore.")) {
    document.body.dataset.state = "lobby";
  } else if (line.startsWith("You're now watching ")) {
    $("game-log").replaceChildren();
    document.body.dataset.state = "watching";
  } else if ((found = CANT_MOVE.exec(line)) && state.view) {
    const view = state.view;
    turnTo(found[1] === "You" || found[1] === view.player ? -1 : 1);
  } else if (line === TO_ROLL) {
    turnTo(1);
  }
  if (line === "") return;
  const kind = kindOf(line, where);
  if (kind === "game") {
    if (DICE.test(line)) sound("dice");
    else if (MOVES.test(line)) sound("move");
    $("message").textContent = lang === "en" ? line : say(line, t);
    log(lang === "en" ? line : say(line, t), "game", "game-log");
  } else if (kind === "error") {
    const inGame = state.lastFrom === "game" && document.body.dataset.state !== "lobby";
    log(line, "error", inGame ? "game-log" : "log");
    if (state.view && !state.play && toMove(state.view)) {
      beginPlay(state.view); // the server refused the play: the player makes it again
      renderBoard();
    }
  } else {
    log(line, "notice");
  }
  renderControls();
}

// -- the settings this client needs on its own connection ------------------------------

// Toggles the page cannot work without, by field of the CLIP 2 line (after the name),
// each with the line that confirms it is on.
const NEEDED = {
  autoboard: [2, "** The board will be refreshed after every move."],
  moreboards: [11, "** Will send rawboards after rolling."],
  notify: [13, "** You'll be notified when new users log in."],
};

// Sends `command`, keeps `undo` for the logout and hides the confirmation `quiet`.
function force(command, undo, quiet) {
  state.quiet.add(quiet);
  state.restore.push(undo);
  send(command);
}

// From the CLIP 2 line: turns on what is off; asks for the boardstyle (3 is needed).
function forceSettings(words) {
  for (const [name, [field, confirmation]] of Object.entries(NEEDED)) {
    if (words[field] === "0") force(`toggle ${name}`, `toggle ${name}`, confirmation);
  }
  state.settingUp = true;
  send("set boardstyle");
  send("show saved");
}

// -- saved matches and the archive, asked for by the page -------------------------------

// `show saved`: its lines fill the lobby's list instead of the chat.
function savedLine(line) {
  const found = SAVED_ROW.exec(line);
  if (line === "no saved games.") {
    state.saved.clear();
    renderWho();
    const asked = state.savedAsked; // by the button: say so in the chat
    state.savedAsked = false;
    return !asked;
  }
  if (line === SAVED_HEADER) {
    state.saved.clear();
    state.savedAsked = false;
  } else if (found) {
    state.saved.set(found[2], { length: found[3], score: `${found[4]}-${found[5]}`,
                                online: found[1] !== "  " });
  } else return false;
  renderWho();
  return true;
}

// The number of the match just finished, from the first row of `archive`: a link to
// its replay on the web face.
function askArchive() {
  const view = state.view;
  if (!view) return;
  state.archiveQuery = true;
  send(view.player === "You" ? "archive" : `archive ${view.player}`);
}

function archiveLine(line) {
  const found = ARCHIVE.exec(line);
  if (!state.archiveQuery || !found) {
    state.archiveQuery = false;
    return false;
  }
  if (found[1] && state.archiveQuery !== "rest") { // the newest is the one
    $("replay").href = `/matches/${found[1]}`;
    $("replay").hidden = document.body.dataset.state === "playing";
    state.archiveQuery = "rest"; // the other rows are not shown either
  }
  return true;
}

// Gives the account back what `forceSettings` changed (a telnet user's boardstyle 2),
// then says goodbye.
function logOut() {
  state.leaving = true;
  forgetToken();
  for (const command of state.restore) send(command);
  state.restore = [];
  send("bye");
}

function onBoard(line) {
  const view = parseBoard(line);
  if (!view) return;
  const [before, moved] = [state.view, state.moved];
  state.moved = null;
  if (before && moved && !state.animating && before.player === view.player) {
    state.animating = true; // the new board is drawn when the move has been shown
    animateMove($("board"), before, moved.name === before.player ? 1 : -1, moved.words)
      .finally(() => {
        state.animating = false;
        renderBoard();
      });
  }
  state.view = view;
  state.play = null;
  if (toMove(view)) {
    beginPlay(view);
    const forced = state.serverMoves ? null
      : forcedPlay(view.mine, view.theirs, view.playerDice[0], view.playerDice[1]);
    // One play only: made for the player (still to confirm if he asked for that).
    for (const s of forced || []) if (state.play) step(s.from, s.to, s.die);
  }
  askClock();
  if (view.turn !== 0) state.betweenGames = false;
  else {
    state.offer = "";
    state.waiting = false;
  }
  renderBoard();
}

// -- the clocks (protocol/clock.md) -------------------------------------------------------

function askClock() {
  if (state.noClock || !["playing", "watching"].includes(document.body.dataset.state)) return;
  state.clockAsked += 1;
  send("clock");
}

// A line answering our `clock`: kept, not shown.
function readClock(line) {
  let found;
  if ((found = CLOCK_STATE.exec(line))) {
    state.clock = readState(found, Date.now());
    return true;
  }
  if ((found = CLOCK_RUNNING.exec(line)) && state.clock) {
    state.clock.running = { name: found[1], delay: seconds(found[2]) };
  } else if (line === CLOCK_STOPPED && state.clock) {
    state.clock.running = null;
  } else if (line === NO_CLOCK || line === "** You're not playing.") {
    state.clock = null;
    state.noClock = line === NO_CLOCK;
  } else {
    return false;
  }
  state.clockAsked -= 1;
  renderClocks();
  return true;
}

function renderClocks() {
  const view = state.view;
  const me = view && (view.player === "You" ? state.me : view.player);
  for (const [id, name] of [["top-clock", view && view.opponent], ["bottom-clock", me]]) {
    const left = state.clock && name ? reserveLeft(state.clock, name, Date.now()) : null;
    $(id).textContent = left === null ? "" : shown(left);
    $(id).classList.toggle("running", !!(left !== null && state.clock.running
                                         && state.clock.running.name === name));
  }
}

// The points of "bob wins the game and gets 2 points.": the board before it still
// showed the score before the game (protocol/board.md 3.1), as GNU Gibbon expects.
function gamePoints(found) {
  const view = state.view;
  if (!found || !view) return;
  const points = Number(found[2]);
  if (!found[1] || found[1] === view.player) view.playerScore += points;
  else view.opponentScore += points;
}

// The final score from "You win the 3 point match 3-1 ." (no board line follows it).
function matchScore(found) {
  const view = state.view;
  if (!found || !view) return;
  const [winner, loser] = [Number(found[2]), Number(found[3])];
  const bottomWon = !found[1] || found[1] === view.player;
  view.playerScore = bottomWon ? winner : loser;
  view.opponentScore = bottomWon ? loser : winner;
  turnTo(0);
}

// -- the board and its moves ---------------------------------------------------------

// Our turn, dice rolled: a play to make.
function toMove(view) {
  return view.player === "You" && view.turn === view.colour && !!view.playerDice[0]
    && !view.wasDoubled;
}

// A fresh play from the board: `dice` still to play is a copy, `rolled` stays whole
// (Undo and the larger-die rule need the whole roll).
function beginPlay(view) {
  const rolled = diceOf(view.playerDice[0], view.playerDice[1]);
  state.play = { steps: [], mine: view.mine, theirs: view.theirs, dice: rolled.slice(), rolled,
                 selected: null };
}

// The turn passes without a board line ("bob can't move.", "It's your turn to roll or
// double."): `side` (1 = the player at the bottom, -1 = the other, 0 = the game is over)
// is now on roll.
function turnTo(side) {
  const view = state.view;
  if (!view) return;
  view.turn = side * view.colour;
  view.playerDice = [0, 0];
  view.opponentDice = [0, 0];
  view.wasDoubled = false;
  state.play = null;
  renderBoard();
}

function options() {
  const play = state.play;
  if (!play) return [];
  return nextSteps(play.mine, play.theirs, play.dice, play.rolled);
}

function renderBoard() {
  const view = state.view;
  $("table").hidden = !view;
  if (!view) return;
  if (state.animating) {
    renderControls();
    return;
  }
  const play = state.play;
  const ui = {};
  if (play) {
    const steps = options();
    ui.mine = play.mine;
    ui.theirs = play.theirs;
    ui.dice = play.dice;
    ui.rolled = play.rolled;
    ui.movable = new Set(steps.map((s) => s.from));
    ui.selected = play.selected;
    ui.dests = new Set(steps.filter((s) => s.from === play.selected).map((s) => s.to));
  }
  drawBoard($("board"), view, ui);
  $("board").classList.toggle("moving", !!play);
  const me = view.player === "You" ? state.me : view.player;
  const rating = (name) => {
    const entry = state.who.get(name);
    return entry ? entry.rating.toFixed(2) : "";
  };
  const length = view.matchLength === 9999 ? t("match.unlimited")
    : t("match.points", { n: view.matchLength });
  $("top-name").textContent = `${view.opponent} ${rating(view.opponent)}`;
  $("bottom-name").textContent = `${me} ${rating(me)}`;
  $("top-score").textContent = `${view.opponentScore}`;
  $("bottom-score").textContent = `${view.playerScore}`;
  $("top-pips").textContent = t("board.pips", { n: pips(ui.theirs || view.theirs) });
  $("bottom-pips").textContent = t("board.pips", { n: pips(ui.mine || view.mine) });
  $("match").textContent = t("board.match", { length, cube: view.cube });
  let turn = "";
  if (view.turn === view.colour) turn = view.player === "You" ? t("board.your_turn") : t("board.turn_of", { name: me });
  else if (view.turn !== 0) turn = t("board.turn_of", { name: view.opponent });
  $("turn").textContent = turn;
  $("last-move").textContent = state.lastMove;
  if ($("reader").checked) readPosition(view, ui, me, turn);
  renderControls();
}

// The screen-reader mode: the position, the dice and whose turn, as one live text.
function readPosition(view, ui, me, turn) {
  const dice = view.playerDice[0] ? view.playerDice : view.opponentDice;
  const left = ui.dice && ui.dice.length ? t("reader.to_play", { dice: ui.dice.join(", ") }) : "";
  const rolled = dice[0] ? t("reader.dice", { a: dice[0], b: dice[1], left }) : "";
  const text = `${describe(view, ui, [me, view.opponent])}${rolled}${turn ? ` ${turn}.` : ""}`;
  if ($("position-text").textContent !== text) $("position-text").textContent = text;
}

function clickPoint(k) {
  const play = state.play;
  if (!play) return;
  const steps = options();
  if (play.selected !== null) {
    const here = steps.filter((s) => s.from === play.selected && s.to === k);
    if (here.length) {
      if (!step(play.selected, k, Math.min(...here.map((s) => s.die)))) renderBoard();
      return;
    }
  }
  play.selected = steps.some((s) => s.from === k) && play.selected !== k ? k : null;
  renderBoard();
  const dest = document.querySelector("#board .dest");
  if (dest) dest.focus();
}

// One checker moved by `die`. The last step sends the play, unless moves wait for
// Confirm; returns whether it was sent.
function step(from, to, die) {
  const play = state.play;
  [play.mine, play.theirs] = apply(play.mine, play.theirs, [from, to]);
  play.dice.splice(play.dice.indexOf(die), 1);
  play.steps.push([from, to]);
  play.selected = null;
  if (options().length || $("confirm-moves").checked) return false;
  sendMove();
  return true;
}

function sendMove() {
  const play = state.play;
  const colour = state.view.colour;
  const words = play.steps.map(([from, to]) => `${absoluteText(from, colour)}-${absoluteText(to, colour)}`);
  act(`move ${words.join(" ")}`);
  state.play = null;
  state.lastMove = t("board.you_moved", { move: words.join(" ") });
  sound("move");
  renderBoard();
}

function undo() {
  if (!state.play || !state.view) return;
  beginPlay(state.view);
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
  const moved = !!state.play && state.play.steps.length > 0;
  $("undo").disabled = !moved;
  $("confirm").hidden = !$("confirm-moves").checked;
  $("confirm").disabled = !(moved && !options().length);
  $("rematch").hidden = !(state.matchOver && view && view.player === "You"
                          && document.body.dataset.state === "match-over");
  $("resign").disabled = !playing || view.turn === 0;
  $("join-next").hidden = !state.betweenGames;
  $("unwatch").hidden = !(view && view.player !== "You" && document.body.dataset.state === "watching");
  const mine = playing && (toRoll || answer || !!state.play);
  if (mine && document.body.dataset.turn !== "mine") {
    sound("turn");
    notifyTurn();
  }
  document.body.dataset.turn = mine ? "mine" : "";
  document.title = mine ? t("play.title_turn", { title: TITLE }) : TITLE;
}

// A desktop notification when the turn becomes yours while the tab is hidden (asked for
// under Settings; the browser asks the player's permission once).
function notifyTurn() {
  if (!$("notify").checked || !document.hidden || !("Notification" in window)
      || Notification.permission !== "granted") return;
  const note = new Notification(t("play.notification"), { body: $("message").textContent,
                                                     tag: "fibsd-turn" });
  note.onclick = () => {
    window.focus();
    note.close();
  };
  document.body.dataset.notified = String(Number(document.body.dataset.notified || 0) + 1);
}

// The screen-reader mode: the position read out after every change, and the chat box
// takes commands in words ("roll", "move 8-5 6-5") by default.
function readerMode() {
  const on = $("reader").checked;
  $("position-text").hidden = !on;
  $("position-text").textContent = "";
  if (on) {
    $("chat-mode").value = "command";
    $("chat-to").hidden = true;
    renderBoard();
  }
}

function wantNotifications() {
  const box = $("notify");
  localStorage.setItem(NOTIFY_KEY, box.checked ? "1" : "0");
  if (!box.checked || !("Notification" in window)) return;
  Notification.requestPermission().then((answer) => {
    if (answer !== "granted") {
      box.checked = false;
      localStorage.setItem(NOTIFY_KEY, "0");
    }
  });
}

// The same match again: ready first if need be (the end of a match leaves you as you were).
function rematch() {
  const view = state.view;
  const me = state.who.get(state.me);
  if (me && !me.ready) act("toggle ready");
  act(`invite ${view.opponent} ${view.matchLength === 9999 ? "unlimited" : view.matchLength}`);
  $("rematch").hidden = true;
}

// -- resident bots: "Play a bot" -------------------------------------------------------

// The site's resident bots (/api/bots): the choice lists each with its strength; the
// button makes the player ready if need be and invites the chosen one to the match
// length asked for, or to the shortest length it plays when it does not play that one.
async function loadBots() {
  let bots = [];
  try {
    const answer = await fetch("/api/bots");
    if (answer.ok) bots = (await answer.json()).bots;
  } catch (error) {
    bots = [];
  }
  const choice = $("bot-choice");
  choice.replaceChildren(...bots.map((bot) => {
    const option = document.createElement("option");
    option.value = bot.name;
    option.textContent = `${bot.name} (${bot.level})`;
    option.dataset.lengths = bot.lengths.join(",");
    return option;
  }));
  $("bots").hidden = bots.length === 0;
  state.bots = new Map(bots.map((bot) => [bot.name, bot.level]));
  renderWho();
}

function playBot() {
  const option = $("bot-choice").selectedOptions[0];
  if (!option || !state.who.has(option.value)) {
    $("message").textContent = t("play.no_bot");
    return;
  }
  const lengths = option.dataset.lengths.split(",").map(Number);
  const wanted = Number($("length").value);
  const me = state.who.get(state.me);
  if (me && !me.ready) send("toggle ready"); // FIBS lets only a ready player invite
  act(`invite ${option.value} ${lengths.includes(wanted) ? wanted : lengths[0]}`);
}

// -- who is online, invitations ---------------------------------------------------------

function status(entry) {
  if (entry.opponent !== "-") return t("who.playing", { name: entry.opponent });
  if (entry.watching !== "-") return t("who.watching", { name: entry.watching });
  if (entry.away) return t("who.away");
  return entry.ready ? t("who.ready") : t("who.not_ready");
}

function button(text, onClick, cls) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (cls) b.className = cls;
  b.addEventListener("click", onClick);
  return b;
}

// The who list is updated in place: a row and its buttons stay the same elements while
// their player is online, so a click never lands on a row redrawn under the pointer.
function whoRow(name) {
  const row = document.createElement("tr");
  row.dataset.name = name;
  for (let i = 0; i < 4; i++) row.appendChild(document.createElement("td"));
  const actions = document.createElement("td");
  if (name !== state.me) {
    actions.append(
      button(t("who.invite"), () => act(`invite ${name} ${$("length").value}`), "invite"),
      button(t("who.resume"), () => act(`invite ${name}`), "resume"),
      button(t("who.watch"), () => act(`watch ${name}`), "watch"),
      button(t("who.tell"), () => {
        $("chat-mode").value = "tell";
        $("chat-to").value = name;
        $("chat-to").hidden = false;
        $("chat-text").focus();
      }, "tell"));
  }
  row.appendChild(actions);
  return row;
}

function renderWho() {
  const body = $("who-rows");
  const rows = new Map([...body.children].map((row) => [row.dataset.name, row]));
  for (const [name, row] of rows) if (!state.who.has(name)) row.remove();
  const names = [...state.who.keys()].sort((a, b) => a.localeCompare(b));
  let previous = null;
  for (const name of names) {
    const entry = state.who.get(name);
    let row = rows.get(name);
    if (!row) {
      row = whoRow(name);
      if (previous) previous.after(row);
      else body.prepend(row);
    }
    previous = row;
    const texts = [name, entry.rating.toFixed(2), String(entry.experience), status(entry)];
    texts.forEach((text, i) => {
      if (row.cells[i].textContent !== text) row.cells[i].textContent = text;
    });
    if (state.bots.has(name) && !row.classList.contains("bot")) {
      row.classList.add("bot"); // marked "bot" after the name (play.css)
      row.cells[0].dataset.badge = t("page.bot");
      row.title = state.bots.get(name);
    }
    const playing = entry.opponent !== "-";
    for (const b of row.querySelectorAll(".invite")) b.hidden = playing;
    for (const b of row.querySelectorAll(".resume")) b.hidden = playing || !state.saved.has(name);
    for (const b of row.querySelectorAll(".watch")) b.hidden = !playing;
  }
  const me = state.who.get(state.me);
  if (me) $("ready").checked = me.ready;
  renderMatches();
  renderSaved();
  const list = $("invitations");
  for (const item of [...list.children]) {
    if (state.invitations.get(item.dataset.name) !== item.dataset.what) item.remove();
  }
  for (const [name, what] of state.invitations) {
    if (list.querySelector(`li[data-name="${name}"]`)) continue;
    const item = document.createElement("li");
    item.dataset.name = name;
    item.dataset.what = what;
    const terms = document.createElement("span");
    terms.textContent = `${invitationText(name, what)} `;
    item.append(terms, button(t("who.join"), () => act(`join ${name}`), "join"),
                button(t("who.decline"), () => decline(name), "decline"));
    list.appendChild(item);
  }
  $("invitations-box").hidden = state.invitations.size === 0;
}

// Keeps the items of `list` keyed by `data-key` in step with `wanted` (key -> [text,
// buttons]); items whose text is unchanged stay the same elements.
function keyedList(list, wanted) {
  for (const item of [...list.children]) {
    const want = wanted.get(item.dataset.key);
    if (!want || item.firstChild.textContent !== want[0]) item.remove();
  }
  for (const [key, [text, buttons]] of wanted) {
    if ([...list.children].some((item) => item.dataset.key === key)) continue;
    const item = document.createElement("li");
    item.dataset.key = key;
    const label = document.createElement("span");
    label.textContent = text;
    item.append(label, ...buttons());
    list.appendChild(item);
  }
  return wanted.size;
}

// Running matches from the who list: one item a pair, with Watch.
function renderMatches() {
  const wanted = new Map();
  for (const [name, entry] of state.who) {
    const other = state.who.get(entry.opponent);
    if (!other || other.opponent !== name || name > entry.opponent) continue;
    if (name === state.me || entry.opponent === state.me) continue; // your own match
    wanted.set(`${name}-${entry.opponent}`, [`${name} – ${entry.opponent} `,
      () => [button(t("who.watch"), () => act(`watch ${name}`), "watch")]]);
  }
  $("matches-box").hidden = !keyedList($("matches"), wanted);
}

function renderSaved() {
  const wanted = new Map();
  for (const [name, match] of state.saved) {
    const length = match.length === "unlimited" ? t("match.unlimited")
      : t("match.points", { n: match.length });
    const text = `${name}, ${length}, ${match.score}${match.online ? "" : ` ${t("who.offline")}`} `;
    wanted.set(name, [text, () => {
      const resume = button(t("who.resume"), () => act(`invite ${name}`), "resume");
      resume.disabled = !match.online;
      return [resume];
    }]);
  }
  $("saved-box").hidden = !keyedList($("saved-list"), wanted);
}

// An invitation's terms ("play a 3 point match") in the reader's words; the rest of the
// line (a saved match's warning) as the server wrote it.
function invitationText(name, what) {
  const found = /^play a ([0-9]+) point match(.*)$/.exec(what);
  if (found) return `${t("invite.points", { name, n: found[1] })}${found[2]}.`;
  for (const [terms, key] of [["play an unlimited match", "invite.unlimited"],
                              ["resume a saved match", "invite.resume"]]) {
    if (what.startsWith(terms)) return `${t(key, { name })}${what.slice(terms.length)}.`;
  }
  return `${name} wants to ${what}.`;
}

// FIBS has no refusal: the invitation leaves the list and its sender is told in a tell.
function decline(name) {
  state.invitations.delete(name);
  act(`tell ${name} No, thank you: I decline your invitation.`);
  renderWho();
}

// -- chat and the log -----------------------------------------------------------------

function log(text, cls, where = "log") {
  const list = $(where);
  const item = document.createElement("li");
  item.textContent = text;
  item.className = cls || "";
  list.appendChild(item);
  while (list.children.length > (where === "log" ? 500 : 100)) list.removeChild(list.firstChild);
  list.scrollTop = list.scrollHeight;
}

function doChat(event) {
  event.preventDefault();
  const text = $("chat-text").value.trim();
  if (!text) return;
  const mode = $("chat-mode").value;
  state.lastFrom = "chat";
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

// -- the pointer: tap or click, or drag a checker (mouse, pen, touch) --------------------

const SVG_NS = "http://www.w3.org/2000/svg";

// Pressing a point chooses it as a click would; if a checker is then picked up, it
// follows the pointer and is let go over a destination in pointerUp.
function pointerDown(event) {
  const point = event.target.closest(".point");
  if (!point || !state.play || event.button > 0) return;
  event.preventDefault();
  clickPoint(Number(point.dataset.point));
  const from = state.play ? state.play.selected : null;
  state.drag = from === null ? null : { from, ghost: null, id: event.pointerId };
}

// The board's own coordinates of a pointer event.
function boardPoint(event) {
  const svg = $("board");
  const at = svg.createSVGPoint();
  at.x = event.clientX;
  at.y = event.clientY;
  return at.matrixTransform(svg.getScreenCTM().inverse());
}

function pointerMove(event) {
  const drag = state.drag;
  if (!drag || event.pointerId !== drag.id) return;
  if (!drag.ghost) {
    drag.ghost = document.createElementNS(SVG_NS, "circle");
    drag.ghost.setAttribute("r", "17");
    drag.ghost.setAttribute("class", `checker ghost ${state.view.colour === 1 ? "o" : "x"}`);
    $("board").appendChild(drag.ghost);
  }
  if (!drag.ghost.isConnected) $("board").appendChild(drag.ghost); // the board was redrawn
  const at = boardPoint(event);
  drag.ghost.setAttribute("cx", String(at.x));
  drag.ghost.setAttribute("cy", String(at.y));
}

function pointerUp(event) {
  const drag = state.drag;
  if (!drag || event.pointerId !== drag.id) return;
  dropGhost();
  const under = document.elementFromPoint(event.clientX, event.clientY);
  const point = under && under.closest("#board .point");
  const to = point ? Number(point.dataset.point) : null;
  if (to === null || to === drag.from || !state.play || state.play.selected !== drag.from) return;
  if (options().some((s) => s.from === drag.from && s.to === to)) clickPoint(to);
}

function dropGhost() {
  if (state.drag && state.drag.ghost) state.drag.ghost.remove();
  state.drag = null;
}

// -- keyboard ----------------------------------------------------------------------------

const KEYS = { r: "roll", d: "double", a: "accept", x: "reject", u: "undo", c: "confirm",
               j: "join-next" };

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

async function start() {
  try {
    await loadCatalog();
    TITLE = document.title;
  } catch {
    // no catalog: the page's English stays, composed texts show their keys
  }
  $("login-form").addEventListener("submit", doLogin);
  setInterval(renderClocks, 1000); // a running clock counts down between answers
  $("in-clear").hidden = !sendsInClear(location.protocol, location.hostname);
  $("logout").addEventListener("click", logOut);
  // Leaving the page logs out (a page kept for the Back button would keep the session).
  window.addEventListener("pagehide", logOut);
  $("board").addEventListener("pointerdown", pointerDown);
  window.addEventListener("pointermove", pointerMove);
  window.addEventListener("pointerup", pointerUp);
  window.addEventListener("pointercancel", dropGhost);
  $("board").addEventListener("click", (event) => {
    // A click a pointer made was handled at pointerdown; this one is a screen reader's.
    const point = event.detail === 0 && event.target.closest(".point");
    if (point) clickPoint(Number(point.dataset.point));
  });
  $("roll").addEventListener("click", () => act("roll"));
  $("double").addEventListener("click", () => act("double"));
  $("accept").addEventListener("click", () => {
    act("accept");
  });
  $("reject").addEventListener("click", () => {
    act("reject");
  });
  $("undo").addEventListener("click", undo);
  $("confirm").addEventListener("click", () => {
    if (state.play && state.play.steps.length && !options().length) sendMove();
  });
  $("rematch").addEventListener("click", rematch);
  $("reader").checked = localStorage.getItem(READER_KEY) === "1";
  $("reader").addEventListener("change", () => {
    localStorage.setItem(READER_KEY, $("reader").checked ? "1" : "0");
    readerMode();
  });
  readerMode();
  $("notify").checked = localStorage.getItem(NOTIFY_KEY) === "1"
    && "Notification" in window && Notification.permission === "granted";
  $("notify").addEventListener("change", wantNotifications);
  $("speed").value = speedName();
  $("speed").addEventListener("change", () => setSpeed($("speed").value));
  for (const kind of KINDS) {
    const box = $(`sound-${kind}`);
    box.checked = isOn(kind);
    box.addEventListener("change", () => setOn(kind, box.checked));
  }
  $("confirm-moves").checked = localStorage.getItem(CONFIRM_KEY) === "1";
  $("confirm-moves").addEventListener("change", () => {
    localStorage.setItem(CONFIRM_KEY, $("confirm-moves").checked ? "1" : "0");
    renderControls();
  });
  $("resign").addEventListener("click", () => act(`resign ${$("resign-kind").value}`));
  $("join-next").addEventListener("click", () => {
    act("join");
    state.betweenGames = false;
    renderControls();
  });
  $("unwatch").addEventListener("click", () => {
    act("unwatch");
    document.body.dataset.state = "lobby";
  });
  $("ready").addEventListener("change", () => send("toggle ready"));
  $("play-bot").addEventListener("click", playBot);
  $("saved").addEventListener("click", () => {
    state.savedAsked = true;
    send("show saved");
  });
  $("chat-form").addEventListener("submit", doChat);
  $("chat-text").addEventListener("keydown", chatKeys);
  $("chat-mode").addEventListener("change", () => {
    $("chat-to").hidden = $("chat-mode").value !== "tell";
  });
  document.addEventListener("keydown", keys);
  document.body.dataset.state = "login";
  performance.mark("ready"); // benchmarks/play_load.py: the page is usable from here
}

start();
