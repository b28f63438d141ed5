package loop

import (
	"context"
	"sync"
)

// QueueMode says how many queued messages one poll takes.
type QueueMode string

// Queue modes.
const (
	// OneAtATime takes the oldest message (the default).
	OneAtATime QueueMode = "one-at-a-time"
	// All takes every queued message.
	All QueueMode = "all"
)

// Queue holds steering or follow-up messages until the loop polls for them (pi's
// PendingMessageQueue). It is safe for concurrent use. Wire it with
// Config.GetSteeringMessages = q.Poll.
type Queue struct {
	mu       sync.Mutex
	mode     QueueMode
	messages []Message
}

// NewQueue returns an empty queue; an empty mode means OneAtATime.
func NewQueue(mode QueueMode) *Queue {
	if mode == "" {
		mode = OneAtATime
	}
	return &Queue{mode: mode}
}

// Enqueue adds messages at the back.
func (q *Queue) Enqueue(messages ...Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.messages = append(q.messages, messages...)
}

// Drain takes what one poll takes: the oldest message, or all of them in mode All.
func (q *Queue) Drain() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	taken := q.peekLocked()
	q.messages = append([]Message(nil), q.messages[len(taken):]...)
	return taken
}

// Peek returns what the next poll would take, without taking it (pi's peek).
func (q *Queue) Peek() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.peekLocked()
}

func (q *Queue) peekLocked() []Message {
	n := len(q.messages)
	if q.mode != All && n > 1 {
		n = 1
	}
	return append([]Message(nil), q.messages[:n]...)
}

// Mode is the queue's current mode.
func (q *Queue) Mode() QueueMode {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mode
}

// Poll is Drain with the signature of Config.GetSteeringMessages and GetFollowUpMessages.
func (q *Queue) Poll(context.Context) ([]Message, error) { return q.Drain(), nil }

// Len is the number of queued messages.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.messages)
}

// Clear drops every queued message.
func (q *Queue) Clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.messages = nil
}

// SetMode changes the mode for later polls.
func (q *Queue) SetMode(mode QueueMode) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.mode = mode
}
