package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/informersim/informersim/sim"
)

// Client faults are the faults aimed at one client of the apiserver rather than at the
// apiserver: a crash-restart of the client's process, a conflict or a slow answer to its next
// call, its next cached LIST served by a lagging replica, a change hidden from its informers.
// The world does not run such a client (clientgo's harness runs a client-go controller; a
// perturbation campaign a Go-hosted one), so its host registers it (AddClient) with the
// function that takes its faults. The faults are ops all the same, rows of opRows: a Script, a
// Generator and a scenario file hold them, World.Ops records them, a written-out run replays
// them and the shrinker drops those the failure does not need. An op aimed at a client the
// world does not know is refused, as one aimed at a replica it does not have.

// TakeClientFault is how a client's host takes a fault aimed at it, inside the op's step (after
// the world narrated it): at once (a restart, a hidden change) or by arming it for the client's
// next occasion (its next update, call or cached LIST), which the host counts and narrates
// when it comes. An error fails the op, as an apiserver's refusal fails a write.
type TakeClientFault func(op Op) error

type client struct {
	name string
	take TakeClientFault
}

// AddClient registers a client of the apiserver that the world does not run, named name (as
// the client faults' Client field names it, and as the trace's actor of their narration), whose
// host takes the client faults aimed at it with take. Register it before scripting a fault
// aimed at it: Script and Apply refuse a client the world does not know. The name must be
// valid (no '/', space, '=' or quote) and not in use by another client or an actor of the
// world.
func (w *World) AddClient(name string, take TakeClientFault) error {
	switch {
	case !validName(name):
		return fmt.Errorf("world: AddClient: invalid name %q", name)
	case take == nil:
		return fmt.Errorf("world: AddClient %s: nil TakeClientFault", name)
	case w.clientNamed(name) != nil:
		return fmt.Errorf("world: AddClient: a client named %q exists already", name)
	case w.actors[name]:
		return fmt.Errorf("world: AddClient: %q is an actor of the world already", name)
	}
	w.clients = append(w.clients, client{name: name, take: take})
	return nil
}

// Clients returns the names of the clients registered with AddClient, in their order.
func (w *World) Clients() []string {
	out := make([]string, len(w.clients))
	for i, c := range w.clients {
		out[i] = c.name
	}
	return out
}

func (w *World) clientNamed(name string) *client {
	for i := range w.clients {
		if w.clients[i].name == name {
			return &w.clients[i]
		}
	}
	return nil
}

// clientRow is the row of a client fault named name: it takes Client (required) and more when
// set, is narrated as the client ("<name> [more]"), then handed to the client's host. A
// Generator draws it on one of the world's clients, and more's value with drawMore.
func clientRow(kind OpKind, name string, more *opArg, drawMore ...func(g *Generator, r *rand.Rand, op *Op)) opRow {
	row := opRow{name: name, fault: true, args: []opArg{{field: fieldClient, key: "client", required: true}}}
	if more != nil {
		row.args = append(row.args, *more)
	}
	row.check = func(op Op) error {
		if !validName(op.Client) {
			return fmt.Errorf("invalid Client name %q (the client the fault is aimed at)", op.Client)
		}
		return checkReplicaDuration(op)
	}
	row.target = func(w *World, op Op) error {
		if len(w.clients) == 0 {
			return errors.New("the world hosts no client to aim it at (World.AddClient: clientgo's harness registers its controller)")
		}
		if op.Client != "" && w.clientNamed(op.Client) == nil {
			return fmt.Errorf("no client named %q (the world's: %s)", op.Client, strings.Join(w.Clients(), ", "))
		}
		if more != nil && more.field == fieldReplica {
			return checkReplica(w, op)
		}
		return nil
	}
	row.apply = func(w *World, op Op) error {
		c := w.clientNamed(op.Client)
		if c == nil { // a Generator applies without target's check
			return fmt.Errorf("world: op %s: no client named %q", op.Kind, op.Client)
		}
		var f []sim.Field
		if more != nil {
			more.field.format(&op, more.key, func(k, v string) { f = append(f, sim.F(k, v)) })
		}
		w.s.Emit(c.name, name, f...)
		return c.take(op)
	}
	row.draw = func(g *Generator, r *rand.Rand) Op {
		op := Op{Kind: kind}
		if n := len(g.w.clients); n > 0 {
			op.Client = g.w.clients[r.IntN(n)].name
		}
		for _, d := range drawMore {
			d(g, r, &op)
		}
		return op
	}
	return row
}

// ClientFault reports whether k is a client fault (OpCrashRestart to OpHiddenChange).
func (k OpKind) ClientFault() bool { return k.valid() && opRows[k].arg(fieldClient) != nil }

// ClientFaultKinds returns the client faults' kinds, in the order of their constants.
func ClientFaultKinds() []OpKind {
	return slices.DeleteFunc(OpKinds(), func(k OpKind) bool { return !k.ClientFault() })
}
