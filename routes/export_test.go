package routes

// PasswordChecks counts bcrypt comparisons, for tests in routes_test.
func PasswordChecks() int64 { return passwordChecks.Load() }
