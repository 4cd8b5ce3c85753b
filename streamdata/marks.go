package streamdata

import (
	"sort"
	"sync"

	"svc/storage"
)

// markKey names one stream: a tenant's definition (hash of its bytes) read
// at one point in time.
type markKey struct {
	tenant string
	def    [32]byte
	at     int64
}

// marks is the bookmark cache of docs/decisions/0025-stream-data.md: per stream, the position after each
// served page and the (range value, id) of the row there, so the next page
// continues by keyset instead of skipping rows; page N costs what page 1
// does. Bounded in streams (oldest evicted) and in marks per stream.
type marks struct {
	mu      sync.Mutex
	streams map[markKey]*streamMarks
	order   []markKey
	max     int
}

type streamMarks struct {
	pos []int // sorted
	at  map[int]storage.StreamMark
}

const maxMarksPerStream = 1 << 16

func newMarks(maxStreams int) *marks {
	return &marks{streams: map[markKey]*streamMarks{}, max: maxStreams}
}

// lookup returns the nearest mark at or before pos and the rows to skip
// after it (nil: from the start).
func (m *marks) lookup(k markKey, pos int) (*storage.StreamMark, int) {
	if pos == 0 {
		return nil, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[k]
	if s == nil {
		return nil, pos
	}
	i := sort.SearchInts(s.pos, pos+1) - 1
	if i < 0 {
		return nil, pos
	}
	p := s.pos[i]
	mk := s.at[p]
	return &mk, pos - p
}

// store records that the row ending position pos (exclusive) is mk.
func (m *marks) store(k markKey, pos int, mk storage.StreamMark) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[k]
	if s == nil {
		if len(m.order) >= m.max && m.max > 0 {
			delete(m.streams, m.order[0])
			m.order = m.order[1:]
		}
		s = &streamMarks{at: map[int]storage.StreamMark{}}
		m.streams[k] = s
		m.order = append(m.order, k)
	}
	if _, ok := s.at[pos]; ok || len(s.pos) >= maxMarksPerStream {
		return
	}
	s.at[pos] = mk
	i := sort.SearchInts(s.pos, pos)
	s.pos = append(s.pos, 0)
	copy(s.pos[i+1:], s.pos[i:])
	s.pos[i] = pos
}
