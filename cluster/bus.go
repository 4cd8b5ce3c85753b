package cluster

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
)

// MaxMessageBytes caps one framed bus message (topic and payload): a
// larger payload is refused at Publish and dropped on receipt.
const MaxMessageBytes = 64 << 20

// deliveryQueue bounds the messages received but not yet handed to
// subscribers; beyond it a message is dropped (and logged), which the
// consumers' safety nets (leases, reconcile loops) cover.
const deliveryQueue = 1024

// frame encodes a bus message: a uvarint topic length, the topic, then
// the payload.
func frame(topic string, payload []byte) ([]byte, error) {
	if len(topic) == 0 {
		return nil, errors.New("cluster: empty bus topic")
	}
	n := binary.MaxVarintLen64 + len(topic) + len(payload)
	if n > MaxMessageBytes {
		return nil, errors.New("cluster: bus message above 64 MiB")
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(topic)))
	b = append(b, topic...)
	return append(b, payload...), nil
}

// unframe splits a message framed by frame; ok is false for anything
// malformed (a short, empty or oversized topic).
func unframe(b []byte) (topic string, payload []byte, ok bool) {
	if len(b) > MaxMessageBytes {
		return "", nil, false
	}
	l, n := binary.Uvarint(b)
	if n <= 0 || l == 0 || l > uint64(len(b)-n) {
		return "", nil, false
	}
	return string(b[n : n+int(l)]), b[n+int(l):], true
}

type envelope struct {
	topic   string
	payload []byte
}

// subscribers hands received messages to the functions subscribed to
// their topic, one message at a time on one goroutine it owns, so a slow
// subscriber never blocks the gossip transport that received the message.
type subscribers struct {
	log *slog.Logger

	mu     sync.RWMutex
	byName map[string]map[*subscription]struct{}

	queue chan envelope
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

type subscription struct{ fn func([]byte) }

func newSubscribers(log *slog.Logger) *subscribers {
	if log == nil {
		log = slog.Default()
	}
	s := &subscribers{log: log, byName: map[string]map[*subscription]struct{}{},
		queue: make(chan envelope, deliveryQueue), stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *subscribers) Subscribe(topic string, fn func(payload []byte)) (cancel func()) {
	sub := &subscription{fn: fn}
	s.mu.Lock()
	m := s.byName[topic]
	if m == nil {
		m = map[*subscription]struct{}{}
		s.byName[topic] = m
	}
	m[sub] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.byName[topic], sub)
			s.mu.Unlock()
		})
	}
}

// deliver queues payload (which the caller no longer touches) for topic's
// subscribers; it never blocks.
func (s *subscribers) deliver(topic string, payload []byte) {
	select {
	case <-s.stop:
		return
	default:
	}
	select {
	case s.queue <- envelope{topic, payload}:
	default:
		s.log.Warn("cluster bus: delivery queue full; message dropped (the consumer's lease or reconcile covers it)", "topic", topic)
	}
}

func (s *subscribers) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case e := <-s.queue:
			s.mu.RLock()
			fns := make([]func([]byte), 0, len(s.byName[e.topic]))
			for sub := range s.byName[e.topic] {
				fns = append(fns, sub.fn)
			}
			s.mu.RUnlock()
			for _, fn := range fns {
				s.call(e.topic, fn, e.payload)
			}
		}
	}
}

// call runs one subscriber; a panicking subscriber is logged, not fatal
// to the delivery goroutine.
func (s *subscribers) call(topic string, fn func([]byte), payload []byte) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("cluster bus: subscriber panicked", "topic", topic, "panic", r)
		}
	}()
	fn(payload)
}

// close stops delivery; queued messages are dropped.
func (s *subscribers) close() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}
