package daemon

// LogSaid is readSaid, for the external tests.
var LogSaid = readSaid
