package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/lang"
)

const usageLang = "the language of the findings (rule titles, fixes, evidence notes) and of the summary's and the report's labels: zh (or cn) or en (default: from the locale, the first of LC_ALL, LC_MESSAGES and LANG that is set: zh_* gives zh)"

// errLang is the language of an error of the run with args: its --lang
// (-l) when one parses, else the locale's.
func errLang(io *streams, args []string) string {
	l := lang.Or(io.lang)
	for i, a := range args {
		v, ok := "", false
		switch {
		case a == "--":
			return l
		case (a == "--lang" || a == "-l") && i+1 < len(args):
			v, ok = args[i+1], true
		case strings.HasPrefix(a, "--lang="):
			v, ok = strings.TrimPrefix(a, "--lang="), true
		}
		if p, err := lang.Parse(v); ok && err == nil {
			l = p
		}
	}
	return l
}

// langFlag is --lang of the commands that render: the language the rules
// write their texts in and the renderers their labels.
type langFlag struct {
	Lang string // the flag; "": the locale's
	lang string // the language of the run, set by resolve
}

func (l *langFlag) register(f *pflag.FlagSet) {
	f.StringVarP(&l.Lang, "lang", "l", "", usageLang)
}

// resolve checks --lang and picks the run's language: the flag, else the
// locale's (io.lang). Chinese needs a UTF-8 locale on a terminal: when
// terminal (the output is the text summary) and the locale is not UTF-8,
// the run is in English, with a warning; the HTML, JSON, SARIF and JUnit
// files are UTF-8 whatever the locale, so they keep Chinese.
func (l *langFlag) resolve(io *streams, terminal bool) error {
	l.lang = lang.Or(io.lang)
	if l.Lang != "" {
		v, err := lang.Parse(l.Lang)
		if err != nil {
			return usageErr("--lang %q: not a language: expected %s", l.Lang, strings.Join(lang.Names, " or "))
		}
		l.lang = v
	}
	if l.lang == lang.ZH && terminal && io.asciiUnits {
		fmt.Fprintln(io.err, "npuprof: warning: Chinese (--lang zh) needs a UTF-8 locale and this one is not (LC_ALL/LC_CTYPE/LANG): writing English; set LANG=zh_CN.UTF-8, or give --lang en")
		l.lang = lang.EN
	}
	return nil
}
