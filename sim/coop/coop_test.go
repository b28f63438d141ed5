package coop

import (
	"fmt"
	"strings"
	"testing"
)

// TestOrderIsFixedByReadyCalls checks that tasks interleave in the order they are readied,
// whatever the Go runtime would prefer.
func TestOrderIsFixedByReadyCalls(t *testing.T) {
	for range 50 {
		s := New()
		var log []string
		tasks := make([]*Task, 3)
		for i := range 3 {
			s.Go(func() {
				tasks[i] = s.Current()
				log = append(log, fmt.Sprintf("start %d", i))
				s.Park()
				log = append(log, fmt.Sprintf("end %d", i))
			})
		}
		s.RunUntilIdle()
		for _, i := range []int{2, 0, 1} {
			s.Ready(tasks[i])
		}
		s.RunUntilIdle()
		got := strings.Join(log, ",")
		want := "start 0,start 1,start 2,end 2,end 0,end 1"
		if got != want {
			t.Fatalf("order = %s, want %s", got, want)
		}
		if s.Live() != 0 {
			t.Fatalf("%d tasks still live", s.Live())
		}
	}
}

// TestWaitRunsChildrenInOrderAndResumesParent checks Wait's contract.
func TestWaitRunsChildrenInOrderAndResumesParent(t *testing.T) {
	s := New()
	var log []string
	s.Go(func() {
		s.Wait([]func(){
			func() { log = append(log, "a") },
			func() { log = append(log, "b") },
		})
		log = append(log, "parent")
	})
	s.RunUntilIdle()
	if got := strings.Join(log, ","); got != "a,b,parent" {
		t.Fatalf("log = %s", got)
	}
}
