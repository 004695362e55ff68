package wire

// ServerLine is one line from the tool server, read as the session acts on
// it.
type ServerLine struct {
	Kind Kind
	// ID is the message's id as text: a string id decoded, a number as
	// written, "null" for a null id; "" for a notification.
	ID string
	// IDIsString is true when the id was written as a JSON string: the
	// executor sends requests under string ids only.
	IDIsString bool
	Msg        *Message
}

// ReadServerLine reads one line (without its LF) from the tool server. The
// line must be what [Inspect] accepts: valid UTF-8, exactly one JSON object
// with no two member names equal under case folding at any depth and no
// number beyond 2^53−1, and either a response (an id and exactly one of
// result and error, nothing else) or the server's own request or
// notification. Anything else — bytes that are not JSON, a batch, half a
// line, bytes that are not UTF-8 — is an *[Error], whose ID (when set)
// names what the line claimed to answer and must be trusted no further.
func ReadServerLine(line []byte) (*ServerLine, error) {
	m, err := Inspect(line)
	if err != nil {
		return nil, err
	}
	sl := &ServerLine{Kind: m.Kind, Msg: m}
	if m.ID != nil {
		sl.IDIsString = m.ID[0] == '"'
		if sl.IDIsString {
			sl.ID = string(decodeString(m.ID[1 : len(m.ID)-1]))
		} else {
			sl.ID = string(m.ID)
		}
	}
	return sl, nil
}
