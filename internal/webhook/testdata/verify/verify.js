// Reads JSON lines {secret, id, timestamp, signature, body} on stdin and
// prints one line per message: "ok" or "fail: <reason>". It uses the npm
// standardwebhooks package, an implementation independent of Kadens'.
const { Webhook } = require("standardwebhooks");
const readline = require("readline");

const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  try {
    new Webhook(m.secret).verify(m.body, {
      "webhook-id": m.id,
      "webhook-timestamp": m.timestamp,
      "webhook-signature": m.signature,
    });
    console.log("ok");
  } catch (e) {
    console.log("fail: " + e.message);
  }
});
