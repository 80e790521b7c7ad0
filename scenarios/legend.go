package scenarios

// Legend explains the narration; the legend directive prints it. Each short name is given with
// the client-go (or kube-apiserver) part it stands for.
const Legend = `legend:
  +1.25s actor: what    simulated time since the start, who acted, what it did
  the pipeline          kube-apiserver -> Reflector -> DeltaFIFO/RealFIFO -> Indexer -> sharedProcessor -> processorListener -> handler -> workqueue
  apiserver             kube-apiserver: ADDED/MODIFIED/DELETED obj=<resource>/<ns>/<name> rv=<revision> for each write
  inf/reflector         the Reflector: LIST and WATCH requests, listed, watching, rewatch, relist-after, resync
  watch-list-synced     watch-list start-up done: the initial-events-end bookmark arrived (items, rv); -retry and -fallback (to LIST) when it fails
  inf/net, inf/watch    the ListerWatcher's side: responses arriving (LIST-ok, WATCH-ok), watch events pulled and their stream's end
  inf/queue             the process loop: pop from the DeltaFIFO/RealFIFO, write the Indexer (cache-add/update/delete/replace), buffer (sharedProcessor.distribute)
  pop key=k deltas=...  one DeltaFIFO Pop that handed out several deltas of key k at once
  pop, pop, then cache  a RealFIFO batch (PopBatch): one pop line per delta of the batch, then its cache writes and buffers
  inf                   the SharedIndexInformer: start, synced (HasSynced: what WaitForCacheSync waits for), stop
  inf/<handler>         a processorListener and its ResourceEventHandler: OnAdd/OnUpdate/OnDelete as called, register, join (late), synced, remove
  ReplacedAll           one queue item for a whole LIST (atomic relist): the cache is replaced at once, then notifications
  SyncAll               one queue item for a resync: same-RV updates of every cached object to the handlers that are due
  Bookmark              a queue item that only moves the cache's resourceVersion; nobody is notified
  tomb(ns/name@rv)      DeletedFinalStateUnknown: a delete the relist found, carrying the last state the cache held
  init=true             part of the initial list (OnAdd's isInInitialList); a handler's HasSynced waits for these
  initial=true          the same flag, as the handler received it
  sync=true             a same-RV update (resync or unchanged relist item): only handlers due for resync get it
  to=h1,h2 (to=-)       the handlers a notification is buffered for (none registered)
  a->b                  an update from the object at rv=a to the object at rv=b
  add(k@rv,init) upd(k@a->b) del(k@rv) del(tomb k@rv)    a handler's log, in docs/informer.md §14's notation
`
