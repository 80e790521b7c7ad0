// Package genmap is a bounded map kept in two generations, for caches of values that are costly
// to make and are asked for again while they are recent: the REST front's encodings of object
// versions (fakeapi/rest) and the client-go harness's conversions of them (clientgo).
//
// Entries go into a current generation. When it holds Limit entries it becomes the old one, the
// older is dropped, and a new current one starts; an entry found in the old generation moves back
// to the current one. So an entry read again and again stays, one not read for a generation's
// worth of puts goes, and the map never holds more than twice its limit, without a list or a
// clock per entry.
//
// The zero Map is empty and ready with DefaultLimit. A Map is not safe for concurrent use: its
// users hold their own lock around it.
package genmap
