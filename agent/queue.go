package agent

import (
	"slices"
	"sync"

	"github.com/turnstile-dev/turnstile/loop"
)

// queue is pi's PendingMessageQueue: a poll takes the oldest message, or every message in
// mode All.
type queue struct {
	mu       sync.Mutex
	mode     loop.QueueMode
	messages []loop.Message
}

func newQueue(mode loop.QueueMode) *queue {
	if mode == "" {
		mode = loop.OneAtATime
	}
	return &queue{mode: mode}
}

func (q *queue) enqueue(m loop.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.messages = append(q.messages, m)
}

func (q *queue) peekLocked() []loop.Message {
	if q.mode == loop.All {
		return slices.Clone(q.messages)
	}
	if len(q.messages) == 0 {
		return nil
	}
	return []loop.Message{q.messages[0]}
}

func (q *queue) peek() []loop.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.peekLocked()
}

func (q *queue) drain() []loop.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	taken := q.peekLocked()
	q.messages = slices.Clone(q.messages[len(taken):])
	return taken
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.messages)
}

func (q *queue) clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.messages = nil
}

func (q *queue) getMode() loop.QueueMode {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mode
}

func (q *queue) setMode(mode loop.QueueMode) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.mode = mode
}
