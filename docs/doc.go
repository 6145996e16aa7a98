// Package docs is the manual. Its tests hold the manual to the code: the
// import rules of architecture.md against the packages' real imports.
package docs
