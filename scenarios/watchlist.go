package scenarios

import (
	"github.com/informersim/informersim/sim/world"
)

// setWatchList applies the informer directive's mode. list-watch is the classic LIST then WATCH
// (informer.md §7.3); watch-list (§7.5) sets world.InformerSpec.WatchList, so the world's
// ListerWatcher reports watch-list as supported and a Reflector that implements the streaming
// start-up uses it. A Reflector without it falls back to LIST then WATCH, as client-go does when
// watch-list is unavailable, and the narration shows which one happened.
func setWatchList(o *world.InformerSpec, mode string) error {
	o.WatchList = mode == "watch-list"
	return nil
}
