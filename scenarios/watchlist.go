package scenarios

import (
	"errors"

	"github.com/informersim/informersim/sim/world"
)

// setWatchList applies the informer directive's mode. list-watch is the classic LIST then WATCH
// (informer.md §7.3). watch-list (§7.5) needs the informer's streaming start-up, which
// informer.SharedIndexInformerOptions does not offer yet, and the world's ListerWatcher says
// watch-list is unsupported; until both exist the directive refuses mode=watch-list with this
// error rather than silently running list+watch.
func setWatchList(_ *world.InformerOptions, mode string) error {
	if mode == "watch-list" {
		return errWatchListUnavailable
	}
	return nil
}

var errWatchListUnavailable = errors.New("mode=watch-list: the informer has no watch-list start-up yet " +
	"(informer.md §7.5; the world's ListerWatcher reports watch-list unsupported), so the Reflector would LIST; " +
	"use mode=list-watch until it lands")
