// One WebSocket to /ws: the FIBS protocol with one line per text message
// (protocol/websocket.md), and the two ways in: a CLIP login, and registration through
// the `guest` dialogue (after which we log in again with CLIP).

export const CLIENT = "fibsd-web";

// Whether a password typed on this page crosses the network unencrypted: plain HTTP to
// a host that is not this machine's loopback.
export function sendsInClear(protocol, hostname) {
  if (protocol !== "http:") return false;
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return !(host === "localhost" || host.endsWith(".localhost") || host === "::1"
           || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(host));
}

export function socketUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

// A connection that hands every line to `onLine` and says when it closed.
export class Connection {
  constructor(onLine, onClose) {
    this.onLine = onLine;
    this.onClose = onClose;
    this.socket = new WebSocket(socketUrl());
    this.socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") this.onLine(event.data);
    });
    this.socket.addEventListener("close", () => this.onClose());
  }

  send(line) {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(line);
  }

  close() {
    this.socket.close(1000);
  }
}

// This tab's session token (protocol/web.md, "Reconnecting"): in sessionStorage, so it
// lives as long as the tab and no other tab sees it; never the password.
const TOKEN_KEY = "fibsd.session";
export const TOKEN_LINE = "token: ";

export function keepToken(name, token) {
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify({ name, token }));
}

export function savedToken() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(TOKEN_KEY) || "null");
    return saved && saved.name && saved.token ? saved : null;
  } catch {
    return null;
  }
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

// Seconds before the next try to reconnect: from half a second, doubled each time up to
// thirty, with a little randomness so that many pages cut by one outage do not come
// back at the same instant.
export function backoff(tries) {
  const base = Math.min(500 * 2 ** tries, 30000);
  return base * (0.8 + 0.4 * Math.random());
}

// Log in with CLIP, asking for a session token; with `token` set, `password` is that
// token instead. Resolves with the connection once `1 <name> ...` arrives (lines from
// then on go to `onLine`); rejects with a message for the person otherwise.
export function login(name, password, onLine, onClose, token = false) {
  return new Promise((resolve, reject) => {
    let sent = false;
    let done = false;
    let loggedIn = false;
    const fail = (text) => {
      if (done) return;
      done = true;
      conn.close();
      reject(new Error(text));
    };
    const conn = new Connection((line) => {
      if (done) {
        onLine(line);
        return;
      }
      if (line === "login: ") {
        if (sent) fail("Wrong name or password.");
        else {
          sent = true;
          conn.send(token ? `login ${CLIENT} 1008 ${name} token:${password}`
                    : `login ${CLIENT} 1008 ${name} ${password} token`);
        }
      } else if (line.startsWith("1 ")) {
        done = true;
        loggedIn = true;
        resolve(conn);
        onLine(line);
      } else if (line.startsWith("** ") && !line.startsWith("** Warning: ")) {
        fail(line.slice(3)); // too many failed logins, the server is full, ...
      }
    }, () => {
      if (loggedIn) onClose();
      else fail("The connection to the server was lost.");
    });
  });
}

// Register `name` with `password` in the guest dialogue, then say bye. Resolves once the
// server says "You are registered."; rejects with the server's own reason otherwise.
export function register(name, password) {
  return new Promise((resolve, reject) => {
    let step = "start";
    let finished = false;
    const end = (error) => {
      if (finished) return;
      finished = true;
      if (error) {
        conn.close();
        reject(new Error(error));
      } else {
        conn.send("bye");
        resolve();
      }
    };
    const conn = new Connection((line) => {
      if (finished) return;
      if (step === "start" && line === "login: ") {
        step = "guest";
        conn.send("guest");
      } else if (step === "guest" && line === "ONE USERNAME PER PERSON ONLY!!!") {
        step = "name";
        conn.send(`name ${name}`);
      } else if (line === "Please give your password: ") {
        step = "password";
        conn.send(password);
      } else if (line === "Please retype your password: ") {
        conn.send(password);
      } else if (line === "You are registered.") {
        end();
      } else if (line.startsWith("** ") || line === "Minimal password length is 4 characters."
                 || line === "Your password may not contain ':'"
                 || line === "Your site is not allowed to create new accounts.") {
        end(line.replace(/^\*\* /, ""));
      }
    }, () => end("The connection to the server was lost."));
  });
}
