package protocol

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// endDescendants ends the command's process group and every other process of it: those
// descending from the command while it lives (a child that called setsid keeps its parent)
// and those whose environment carries its mark (a setsid child whose parent has exited,
// adopted by another). It scans /proc again until none is left, as a dying process may
// have forked.
func endDescendants(cmd *exec.Cmd, mark string) {
	if cmd.Process == nil {
		return
	}
	for round := range 10 {
		pids := relatives(cmd.Process.Pid, mark)
		killProcessGroup(cmd)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(time.Duration(round+1) * 5 * time.Millisecond)
	}
}

// relatives lists the live processes of the command whose process (and group) is leader:
// its group, its descendants, and those carrying its mark, and theirs; never the harness.
func relatives(leader int, mark string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	type proc struct{ ppid, pgrp int }
	procs := map[int]proc{}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue // a zombie holds nothing; its parent reaps it
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgrp, _ := strconv.Atoi(string(f[2]))
		procs[pid] = proc{ppid, pgrp}
		children[ppid] = append(children[ppid], pid)
	}
	needle := []byte("\x00" + markEnv + "=" + mark + "\x00")
	selected := map[int]bool{}
	var queue []int
	pick := func(pid int) {
		if !selected[pid] {
			selected[pid] = true
			queue = append(queue, pid)
		}
	}
	for pid, p := range procs {
		if pid == leader || p.pgrp == leader {
			pick(pid)
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(append([]byte{0}, env...), needle) {
			pick(pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			pick(c)
		}
	}
	out := make([]int, 0, len(selected))
	for pid := range selected {
		out = append(out, pid)
	}
	return out
}
