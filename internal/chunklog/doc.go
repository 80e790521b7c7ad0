// Package chunklog keeps a log of values, oldest first, in chunks that are filled in place and
// never copied, and drops values from its old end.
//
// A slice grown by append copies every value each time it doubles, which costs much when the
// values are large and many (a trace's events, an apiserver's request records) and the log is
// read only now and then. A Log allocates its chunks as it grows, each twice the one before from
// FirstChunk values up to its MaxChunk, so that a short log does not take room for thousands of
// values, and releases a chunk once every value in it is dropped. Dropped values are cleared, so
// they keep nothing alive.
//
// The zero Log is empty and ready. A Log is not safe for concurrent use.
package chunklog
