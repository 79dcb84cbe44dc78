// Package facts assembles the deployment facts the rules read: inferred
// from the profile, then the deployment script's (--deploy), then --fact
// overrides, each checked against the fact catalog (package rulefmt), and
// where the script or --fact contradicts what the profile measured, the
// profile's value and the conflict.
package facts
