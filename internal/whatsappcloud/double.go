// Package whatsappcloud is a local double of Meta's WhatsApp Cloud API
// (decisions §25) for `svc dev` and `svc testenv`, run in the svc process
// as the mail sink is. It answers the calls the service makes the way the
// Graph API does, and writes every message it accepts as one JSON file
// under its directory, so a person or a test can read what was sent.
//
// What it speaks (paths under its URL, which plays the versioned Graph
// base such as https://graph.facebook.com/v21.0):
//
//	GET  /{phone_number_id}                 the number's display phone, quality and tier
//	POST /{phone_number_id}/messages        a template or text message → {messages:[{id: "wamid…"}]}
//	POST /{waba_id}/message_templates       a template submitted → {id, status: PENDING, category}
//
// Every call needs `Authorization: Bearer <token>`; a token that starts
// with "invalid" is refused as an expired one is (OAuthException 190).
// A phone number id must be digits (else error 100, as for an unknown
// object). Failures on demand: a recipient ending in 131026 answers
// "Message undeliverable" (131026), one ending in 131049 the
// ecosystem-engagement limit (131049); nothing is written for either.
// Tokens and app secrets it receives are never written.
package whatsappcloud

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Message is one accepted message as the double writes it.
type Message struct {
	PhoneNumberID string          `json:"phone_number_id"`
	To            string          `json:"to"`
	Type          string          `json:"type"`
	Template      json.RawMessage `json:"template,omitempty"`
	Text          json.RawMessage `json:"text,omitempty"`
	WAMID         string          `json:"wamid"`
	At            time.Time       `json:"at"`
}

// Double is a running Cloud API double.
type Double struct {
	// URL is the Graph base the service is given as SVC_WHATSAPP_API_BASE.
	URL string
	// Dir holds one JSON file per accepted message.
	Dir string

	srv *http.Server
	mu  sync.Mutex
	seq int
}

// Start serves the double on a free loopback port, writing messages under
// dir (made if missing; a temporary directory when dir is empty).
func Start(dir string) (*Double, error) {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "whatsapp-"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("whatsapp double: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("whatsapp double: %w", err)
	}
	d := &Double{URL: "http://" + ln.Addr().String() + "/v21.0", Dir: dir}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v21.0/{id}", d.phoneNumber)
	mux.HandleFunc("POST /v21.0/{id}/messages", d.message)
	mux.HandleFunc("POST /v21.0/{id}/message_templates", d.template)
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = d.srv.Serve(ln) }()
	return d, nil
}

// Stop stops serving.
func (d *Double) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return d.srv.Shutdown(ctx)
}

// Messages reads every message written so far, oldest first.
func (d *Double) Messages() ([]Message, error) { return ReadMessages(d.Dir) }

// ReadMessages reads the messages a double wrote under dir, oldest first.
func ReadMessages(dir string) ([]Message, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(names))
	for _, name := range names { // names sort by their time and sequence prefix
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// graphError answers Meta's error envelope.
func graphError(w http.ResponseWriter, status, code int, kind, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": kind, "code": code,
		"fbtrace_id": randomHex(8)}})
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// authorized checks the bearer token as Meta would: present, and not one
// the double treats as expired.
func authorized(w http.ResponseWriter, r *http.Request) bool {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" || strings.HasPrefix(token, "invalid") {
		graphError(w, http.StatusUnauthorized, 190, "OAuthException", "Error validating access token: Session has expired.")
		return false
	}
	return true
}

// knownObject refuses an id that is not digits, as the Graph API refuses
// an object it does not know.
func knownObject(w http.ResponseWriter, id string) bool {
	if id == "" || strings.Trim(id, "0123456789") != "" {
		graphError(w, http.StatusBadRequest, 100, "GraphMethodException",
			fmt.Sprintf("Unsupported get request. Object with ID '%s' does not exist", id))
		return false
	}
	return true
}

func (d *Double) phoneNumber(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !authorized(w, r) || !knownObject(w, id) {
		return
	}
	last := id[max(len(id)-7, 0):]
	answer(w, map[string]any{"id": id, "verified_name": "Dev Store", "display_phone_number": "+20 100 " + last,
		"quality_rating": "GREEN", "messaging_limit_tier": "TIER_1K", "code_verification_status": "VERIFIED"})
}

func (d *Double) message(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !authorized(w, r) || !knownObject(w, id) {
		return
	}
	var body struct {
		MessagingProduct string          `json:"messaging_product"`
		To               string          `json:"to"`
		Type             string          `json:"type"`
		Template         json.RawMessage `json:"template"`
		Text             json.RawMessage `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		graphError(w, http.StatusBadRequest, 100, "OAuthException", "Invalid parameter: the body is not JSON")
		return
	}
	switch {
	case body.MessagingProduct != "whatsapp":
		graphError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) The parameter messaging_product is required.")
		return
	case body.To == "":
		graphError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) The parameter to is required.")
		return
	case body.Type == "template" && len(body.Template) == 0, body.Type == "text" && len(body.Text) == 0:
		graphError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) The parameter "+body.Type+" is required.")
		return
	case body.Type != "template" && body.Type != "text":
		graphError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) Param type must be one of {TEXT, TEMPLATE}")
		return
	case strings.HasSuffix(body.To, "131026"):
		graphError(w, http.StatusBadRequest, 131026, "OAuthException", "Message undeliverable")
		return
	case strings.HasSuffix(body.To, "131049"):
		graphError(w, http.StatusBadRequest, 131049, "OAuthException",
			"This message was not delivered to maintain healthy ecosystem engagement.")
		return
	}
	m := Message{PhoneNumberID: id, To: body.To, Type: body.Type, Template: body.Template, Text: body.Text,
		WAMID: "wamid." + randomHex(24), At: time.Now().UTC()}
	if err := d.write(m); err != nil {
		graphError(w, http.StatusInternalServerError, 1, "OAuthException", "An unknown error occurred")
		return
	}
	answer(w, map[string]any{"messaging_product": "whatsapp",
		"contacts": []map[string]string{{"input": body.To, "wa_id": strings.TrimPrefix(body.To, "+")}},
		"messages": []map[string]string{{"id": m.WAMID}}})
}

func (d *Double) write(m Message) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.seq++
	name := fmt.Sprintf("%d-%06d-%s.json", m.At.UnixNano(), d.seq, m.WAMID)
	d.mu.Unlock()
	tmp := filepath.Join(d.Dir, "."+name)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(d.Dir, name)) // a reader never sees half a file
}

func (d *Double) template(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !authorized(w, r) || !knownObject(w, id) {
		return
	}
	var body struct {
		Name     string `json:"name"`
		Category string `json:"category"`
		Language string `json:"language"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || body.Name == "" || body.Language == "" {
		graphError(w, http.StatusBadRequest, 100, "OAuthException", "(#100) Invalid parameter")
		return
	}
	answer(w, map[string]any{"id": fmt.Sprintf("%d", time.Now().UnixNano()), "status": "PENDING", "category": strings.ToUpper(body.Category)})
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("whatsapp double: no randomness"))
	}
	return hex.EncodeToString(b)
}
