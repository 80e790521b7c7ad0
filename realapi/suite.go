package realapi

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Prepare installs what the sequences share on a side: the Widget CustomResourceDefinition
// (WidgetCRD), and waits until its resource is served.
func Prepare(ctx context.Context, s *Side) error {
	resp, err := s.Do(ctx, Request{Method: "POST", Path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Body: WidgetCRD})
	if err != nil {
		return err
	}
	if resp.Code != 201 && resp.Code != 409 {
		return fmt.Errorf("realapi: %s: creating the Widget definition: %d %s", s.Name, resp.Code, resp.Body)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := s.Do(ctx, Request{Method: "GET", Path: "/apis/realapi.example.com/v1/widgets"})
		if err != nil {
			return err
		}
		if resp.Code == 200 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("realapi: %s: widgets not served 60 s after their definition: %d %s", s.Name, resp.Code, resp.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// RunSuite runs every sequence on both sides (each sequence on the two at once, the sequences
// one after another) and compares their answers. progress, when set, is called after each
// sequence.
func RunSuite(ctx context.Context, real, ours *Side, seqs []Sequence, known []KnownDifference, progress func(done int, r *Report)) (*Report, error) {
	if real == nil || ours == nil {
		return nil, fmt.Errorf("realapi: RunSuite needs both sides")
	}
	if err := CompileKnown(known); err != nil {
		return nil, err
	}
	rep := &Report{}
	for i, seq := range seqs {
		var wg sync.WaitGroup
		var a, b []Outcome
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); a, errA = Run(ctx, real, seq) }()
		go func() { defer wg.Done(); b, errB = Run(ctx, ours, seq) }()
		wg.Wait()
		if errA != nil {
			return rep, errA
		}
		if errB != nil {
			return rep, errB
		}
		rep.Compare(seq, a, b, known)
		if progress != nil {
			progress(i+1, rep)
		}
	}
	rep.Finish(known)
	return rep, nil
}
