package compare

import (
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// Compile-time checks that the fake apiserver's adapters and client-go's types fit each other's
// interfaces (design.md, style rule 2). They live here, not in sim, because only this module may
// import client-go.
var (
	// A real client-go informer can run on the fake apiserver.
	_ cache.ListerWatcher            = (*fakeapi.ListerWatcher)(nil)
	_ cache.ListerWatcherWithContext = (*fakeapi.ListerWatcher)(nil)
	// Our informer can run on a real cluster through client-go's ListWatch.
	_ informer.ListerWatcher = (*cache.ListWatch)(nil)
	// The per-namespace (or cluster-wide) client is a dynamic.ResourceInterface as is.
	_ dynamic.ResourceInterface = (*fakeapi.ResourceClient)(nil)
	// The server becomes a dynamic.Interface through clientgo.Dynamic, the exported adapter.
	_ dynamic.Interface = clientgo.Dynamic(nil)
)
