package results

// RuleInfo describes one rule or budget of the evaluation (the SARIF
// log's rule list): Severity "auto" for a rule whose saving sets it;
// Budget is a budget's text ("" for a rule); Disabled says why it is
// switched off ("" when it is on).
type RuleInfo struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Why      string `json:"why"`
	Fix      string `json:"fix"`
	Budget   string `json:"budget"`
	Disabled string `json:"disabled"`
}
