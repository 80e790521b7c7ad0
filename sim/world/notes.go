package world

// Implementation notes, kept out of the package documentation (doc.go), which is the contract.
//
// Discovery: the informer's step observer reports each registration (StepRegistered,
// StepJoined) from inside the registration call, with the informer's locks held, so the world
// only records it there (name, actor, DeliveryLog) and looks its handle up in Stepper.Listeners
// once the call has returned. AddHandler announces the name it wants before calling the
// informer, so nothing predicts registration IDs. Deliveries reach the DeliveryLog as
// StepDelivered events, which carry the object handed to the handler, just before the call.
//
// Narration of writes hangs on fakeapi.Server.OnCommit, called inside the apiserver's commit,
// so every revision the informers may see is explained in the trace at the step that made it.
//
// Cost per step: handler actors are cached actors of the engine (sim.Sim.AddCachedActor): the
// engine asks one for its actions only after the handler's state changed (a notification
// buffered into an empty buffer, a delivery, a removal, a Stop, its "done" timer), so the many
// idle handlers of a world cost a step nothing; test binaries re-ask them all at every step
// (invariant.Thorough) to catch a missed change. The reflector, watch and queue actors are
// cached too: the world wakes all three whenever it feeds the Reflector a response or the
// stream's opening or end, at Start, Stop and when a stream is dropped, and the queue actor
// after a resync tick; a watch event that leaves the stream open wakes only those whose offers
// it changed (the queue stopped being empty, the wire was full, the Reflector's request
// changed); the apiserver's watcher of the
// open stream wakes the watch actor itself whenever its buffer grows or it closes
// (fakeapi.Watcher.OnReady, called inside the write, the clock advance or the fault, whoever
// made it), so a handler's delivery, most steps of a busy world, asks none of them. Per
// delivery, a handler's DeliveryLog finds its state for the key by a number the world gave the key
// once, when the informer distributed the notification to every handler (Handler's mirror of
// its buffer keeps the numbers in order), rather than by hashing the key once per handler.
// After every step the world re-arms the apiserver's timer at its NextDeadline, which it asks
// only when the apiserver's state may have changed (fakeapi.Server.OnStateChange) or the clock
// moved; test binaries ask anyway and check the kept answer.
// Network deliveries re-arm fired "recv" timers (Reset: to the engine the same as a new timer)
// and the wire reuses its buffer, so a watch event costs the world no allocation; narration
// fields are built only when narration reaches someone (sim.Sim.Narrated).
