// Package pinned checks that trace hashes equal the ones recorded in a file of the repository.
//
// Performance work on the simulation path must not change any schedule: the same seed must give
// the same trace before and after. A test pins the hashes of a set of seeds in a testdata file;
// a change that alters one fails with the seeds that moved. A change that means to alter the
// schedule (a new behavior, not a speed-up) rewrites the file with
//
//	INFORMERSIM_UPDATE_PINNED=1 go test -run '^TestPinnedHashes$' ./pkg
//
// and says why in its commit message.
package pinned
