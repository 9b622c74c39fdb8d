// A webhook receiver written as Azure's Event Grid documentation shows,
// with the Event Grid SDK and nothing of Kadens: it parses each POST with
// EventGridDeserializer (which requires the Event Grid schema), answers the
// subscription validation event by echoing its code, and prints every
// other event as one JSON line on stdout. The first line is the port it
// listens on.
const http = require("http");
const { EventGridDeserializer, isSystemEvent } = require("@azure/eventgrid");

const deserializer = new EventGridDeserializer();

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    try {
      const events = await deserializer.deserializeEventGridEvents(Buffer.concat(chunks).toString("utf8"));
      for (const event of events) {
        if (isSystemEvent("Microsoft.EventGrid.SubscriptionValidationEvent", event)) {
          res.writeHead(200, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ validationResponse: event.data.validationCode }));
          console.log(JSON.stringify({ validated: true, aegEventType: req.headers["aeg-event-type"] }));
          return;
        }
      }
      for (const event of events) {
        console.log(JSON.stringify({
          eventType: event.eventType,
          subject: event.subject,
          id: event.id,
          topic: event.topic,
          eventTime: event.eventTime.toISOString(),
          dataVersion: event.dataVersion,
          aegEventType: req.headers["aeg-event-type"],
          data: event.data,
        }));
      }
      res.writeHead(200);
      res.end();
    } catch (e) {
      console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
      res.writeHead(400);
      res.end();
    }
  });
});

server.listen(0, "127.0.0.1", () => console.log(String(server.address().port)));
