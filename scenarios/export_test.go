package scenarios

// DirectiveRows counts the rows of every topic's list and the names they index (the external
// tests' view of specs).
func DirectiveRows() (rows, names int) {
	for _, topic := range directiveTopics {
		rows += len(topic)
	}
	return rows, len(specs)
}

// DirectiveHasHandler reports whether the row of directive name holds a handler.
func DirectiveHasHandler(name string) bool { return specs[name] != nil && specs[name].handle != nil }
