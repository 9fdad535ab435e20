// Package eventdep implements the data-aware dependencies of seed 000:
// reading events and configurations in the seed's JSON shape, the index
// that finds the dependencies an event validates without scanning every
// configuration, and the life windows that decide whether a configuration
// is met at an instant.
//
// Instants are int64 nanoseconds since the Unix epoch, so event
// timestamps lie between 1677-09-21 and 2262-04-11.
package eventdep
