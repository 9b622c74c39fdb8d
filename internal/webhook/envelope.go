package webhook

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kadens/kadens/internal/store"
)

// EventGridEvent is the EventGrid-style envelope; a POST carries an array
// of them.
type EventGridEvent struct {
	ID              string          `json:"id"`
	Topic           string          `json:"topic"`
	Subject         string          `json:"subject"`
	EventType       string          `json:"eventType"`
	EventTime       time.Time       `json:"eventTime"`
	Data            json.RawMessage `json:"data"`
	DataVersion     string          `json:"dataVersion"`
	MetadataVersion string          `json:"metadataVersion"`
}

// CloudEvent is a CloudEvents 1.0 event in the structured JSON mode; a POST
// carries one.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject"`
	Time            time.Time       `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
}

// ValidationData is the data of the handshake event.
type ValidationData struct {
	ValidationCode string `json:"validationCode"`
	ValidationURL  string `json:"validationUrl"`
}

// Topic is the topic (EventGrid) and source (CloudEvents) of a tenant's
// events.
func Topic(tenantID string) string { return "/tenants/" + tenantID }

// Encode returns the body and content type of a POST of events in format:
// an EventGrid array, or one CloudEvents event (a CloudEvents delivery
// carries exactly one).
func Encode(format, tenantID string, events []store.Event) ([]byte, string, error) {
	if format == FormatCloudEvents {
		if len(events) != 1 {
			return nil, "", fmt.Errorf("webhook: a CloudEvents message carries one event, not %d", len(events))
		}
		e := events[0]
		b, err := json.Marshal(CloudEvent{SpecVersion: "1.0", ID: e.ID, Source: Topic(tenantID), Type: e.EventType,
			Subject: e.Subject, Time: e.EventTime, DataContentType: "application/json", Data: e.Data})
		return b, "application/cloudevents+json", err
	}
	out := make([]EventGridEvent, len(events))
	for i, e := range events {
		out[i] = EventGridEvent{ID: e.ID, Topic: Topic(tenantID), Subject: e.Subject, EventType: e.EventType,
			EventTime: e.EventTime, Data: e.Data, DataVersion: "1", MetadataVersion: "1"}
	}
	b, err := json.Marshal(out)
	return b, "application/json", err
}
