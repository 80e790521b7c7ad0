package realapi

import "fmt"

// Known are the differences between kube-apiserver v1.37.2 and informersim that the suite
// accepts, one row each, every one listed with its reason in docs/realcluster.md under its ID.
// A run fails on a difference none of them explains, and on a row that explained nothing (stale).
var Known = []KnownDifference{
	{ID: "list-item-typemeta", Path: `.*items\[\d+\]\.(apiVersion|kind)`,
		Reason: "kube-apiserver writes the items of a built-in kind's list without apiVersion and kind; the front writes each item as it is stored (one encoding shared by GET, LIST and watch)"},
	{ID: "managed-fields-sets", Path: `.*managedFields\[\d+\]\.fieldsV1.*`,
		Reason: "the field sets informersim's field manager records differ in detail: parent entries (.) of struct fields, and the fields the Go type writes empty (an event's eventTime), which kube-apiserver's does not own"},
	{ID: "kind-validation", Step: `a Deployment without a selector: Invalid|an events.k8s.io event without reportingController: Invalid|a finalizer that is not a qualified name: Invalid|an owner reference without uid: Invalid`,
		Reason: "kube-apiserver validates every field of each built-in kind (422); informersim validates metadata and the kinds' types, not each kind's rules"},
	{ID: "duplicate-fields", Step: `duplicate fields, .*`,
		Reason: "the front decodes a JSON body into maps, the last duplicate winning; kube-apiserver's strict decoder sees the duplicate (400 under Strict, a warning under Warn)"},
	{ID: "body-of-another-kind", Step: `a body of another kind`,
		Reason: "the front stores a body under the kind its URL names; kube-apiserver refuses a body of another kind (400, no conversion)"},
	{ID: "error-wording", Path: `body\.(message|details\.causes\[\d+\]\.message|details\.causes|details\.kind|details\.name|details)`,
		Step:   `JSON patch whose test fails|delete with a wrong uid precondition: Conflict|a body that is not JSON|an unknown content type: 415|an unsupported verb: MethodNotAllowed|a patch that is not JSON|strategic merge patch of a custom resource: 415|list by an unsupported field: BadRequest|list by a malformed label selector: BadRequest|a malformed continue token: BadRequest|a resourceVersion that is not a number|a negative scale: Invalid|adding a finalizer while deleting: Forbidden|a widget with an unknown field, Strict|create with an invalid name|its scale|delete with an unknown propagationPolicy`,
		Reason: "error messages and details worded otherwise where the code and reason are kube-apiserver's; clients branch on those"},
	{ID: "real-500s", Step: `apply with an unknown field, Strict|an unknown directive|watch with a malformed resourceVersion`,
		Reason: "kube-apiserver answers these 500 InternalError (an unknown field in an apply under Strict, kubernetes#139253; an unknown patch directive; a watch's malformed resourceVersion); informersim answers the client's error, 400 BadRequest"},
	{ID: "watch-expired-message", Family: `compact`, Step: `watch from before the compaction: 410`, Path: `events\[\d+\]\.object\.message`,
		Reason: "a watch from a compacted revision of a resource without a watch cache (events) gets etcd's wording; informersim words every 410 as the watch cache does (too old resource version: N (M))"},
	{ID: "dry-run-delete-answer", Step: `dry-run delete`,
		Reason: "a dry-run delete of an object without finalizers answers kube-apiserver's Success Status; informersim answers the object"},
	{ID: "custom-resource-scale-unset", Family: `crd`, Step: `scale it|apply to it|list widgets|a table of widgets`,
		Path:   `code|body\.(apiVersion|kind|code|reason|message|details|status|spec|metadata\.(name|namespace|uid|creationTimestamp))|body\.(items\[\d+\]\.|rows\[\d+\]\.object\.)?(metadata\.(generation|resourceVersion)|spec\.replicas)`,
		Reason: "the scale subresource of a custom resource whose spec lacks the replicas field: kube-apiserver's update sets it; informersim answers 500, so the steps after it see another generation and revision"},
	{ID: "discovery-extra", Family: `discovery`, Path: `body\.reduced\.(resources|apiSchemas|groups).*`,
		Reason: "kube-apiserver serves resources informersim does not (bindings, componentstatuses, alpha and beta policies) and declares subresources' kinds' schemas (TokenRequest, Eviction)"},
	{ID: "discovery-unknown-group", Step: `discovery /apis/nope/v1`,
		Reason: "kube-apiserver answers an unknown group with its mux's plain-text 404 page; informersim with a NotFound Status"},
	{ID: "server-version", Step: `discovery /version`, Path: `body\.reduced\.gitVersion`,
		Reason: "informersim says what it is (v1.37.0-informersim)"},
	{ID: "table-object-none", Step: `a table without headers`, Path: `body\.rows\[\d+\]\.object`,
		Reason: "with includeObject=None kube-apiserver leaves each row's object out; informersim includes its metadata"},
	{ID: "kube-root-ca", Step: `first page|second page|limit with continue and resourceVersion: Invalid|sendInitialEvents without bookmarks: Invalid`,
		Reason: "kube-controller-manager publishes the ConfigMap kube-root-ca.crt in every namespace; informersim's stand-ins do not, so a list or watch without the sequence's label sees it on the real side only, and a labelled list's pages end with a continue token before it (which only the real side then sends with a resourceVersion, and is refused)"},
	{ID: "deletion-grace-period", Path: `.*metadata\.deletionGracePeriodSeconds`,
		Reason: "kube-apiserver sets deletionGracePeriodSeconds: 0 on an object it marks for deletion; informersim leaves it unset"},
	{ID: "scale-writes", Family: `scale`, Step: `apply to the scale|get the Deployment`,
		Reason: "kube-apiserver takes server-side apply on the scale subresource and records writes through /scale under their own managers; informersim answers an apply there 415 and records them as writes of the main resource"},
	{ID: "events-managers-across-versions", Family: `events`, Step: `the change through events.k8s.io/v1|update the new event through core/v1`, Path: `body\.metadata\.managedFields`,
		Reason: "an event written through one version and updated through the other: kube-apiserver keeps one Update entry per manager, informersim one per manager and version"},
	{ID: "rank-after-invalid-finalizer", Family: `finalizer`, Step: `delete orphaning dependents`, Path: `body\.metadata\.resourceVersion`, Real: `"rv\d+"`, Ours: `"rv\d+"`,
		Reason: "the answer to the orphaning delete ranks one revision later on informersim's side: two steps earlier it created the ConfigMap whose finalizer is not a qualified name, which kube-apiserver refused (kind-validation), so its side has one more revision of the sequence's own"},
	{ID: "controller-writes-in-tables", Step: `a Deployment table`, Path: `body\.rows\[\d+\]\.object\.metadata\.(annotations|managedFields)`,
		Reason: "the rows' objects of a Deployment table carry what the controllers wrote (kube-controller-manager's revision annotation and status managers, informersim's status managers), which differ"},
	{ID: "watch-list-tick-bookmark", Family: `watchlist`, Step: `watch-list: initial events, their end bookmark, then the late create`, Path: `progressBookmarks`, Real: `1`, Ours: `0`,
		Reason: "kube-apiserver's watch cache queues a new watch-list watcher for a bookmark at its next one-second dispatch tick, and sends it when the cache has moved past where the watch started (the late create, or any write of the resource); informersim's next bookmark is a minute away"},
}

// CompileKnown checks and compiles the rows of known.
func CompileKnown(known []KnownDifference) error {
	seen := map[string]bool{}
	for i := range known {
		if err := known[i].compile(); err != nil {
			return err
		}
		if seen[known[i].ID] {
			return fmt.Errorf("realapi: known difference %s listed twice", known[i].ID)
		}
		seen[known[i].ID] = true
	}
	return nil
}
