// Package rulefmt is the rule-file format: it reads a rule file (YAML),
// checks it (keys, ids, severities, metric, fact and threshold names,
// version ranges, references between rules), compiles its expressions and
// templates against the rule language (Env), and reports every problem as
// FILE:LINE:COL. Package rules evaluates what it loads.
package rulefmt
