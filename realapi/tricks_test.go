package realapi

import (
	"context"
	"testing"

	"github.com/informersim/informersim/internal/fastpath"
)

// TestTricksAnswerAsTheStandardCode runs the suite's sequences on informersim twice, once with
// its speed tricks (internal/fastpath) and once with all of them taken out, and wants the same
// answers. Each trick has its own test against the standard code beside it; this one holds them
// all to it on every request the differential suite makes, without a real control plane: the
// shared encodings once answered a write that removed an object's last finalizer with the
// object as stored before the write, which only the plain build's run against kube-apiserver
// showed.
func TestTricksAnswerAsTheStandardCode(t *testing.T) {
	if !fastpath.On {
		t.Skip("a plain build (-tags plain) has no tricks to take out: both runs would be the standard code")
	}
	with, without := preparedInformersim(t, 1), preparedInformersim(t, 1)
	ctx := context.Background()
	seqs, err := Generate(5, 4*len(Families))
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{}
	for _, seq := range seqs {
		a, err := Run(ctx, with, seq)
		if err != nil {
			t.Fatal(err)
		}
		restore := takeOutEveryTrick()
		b, err := Run(ctx, without, seq)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		rep.Compare(seq, a, b, nil)
	}
	if len(rep.Differences) != 0 {
		t.Errorf("informersim with its tricks (first) against the standard code (second):\n%s", rep)
	}
	if rep.Steps < 8*len(seqs) {
		t.Errorf("only %d steps compared in %d sequences", rep.Steps, len(seqs))
	}
}

// takeOutEveryTrick takes every speed trick out of the process and returns what puts them back.
func takeOutEveryTrick() (restore func()) {
	var undo []func()
	for _, tr := range fastpath.Tricks() {
		undo = append(undo, fastpath.SetOut(tr, true))
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}
