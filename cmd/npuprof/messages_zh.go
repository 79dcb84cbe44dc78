package main

import (
	"embed"

	"github.com/npuprof/npuprof/internal/lang"
)

// messageText is a message format of export or eplb plan in language l.
func messageText(l, format string) string {
	if l != lang.ZH {
		return format
	}
	if z, ok := zhMessages()[format]; ok {
		return z
	}
	return format
}

// exportText is one of export's messages in the locale's language.
func exportText(io *streams, format string) string { return messageText(lang.Or(io.lang), format) }

// zhFiles are the Chinese catalogs (internal/lang's format, read on first
// use: a run in English never reads them): zh/help.txt, the help's texts
// (zhHelp); zh/messages.txt, the messages of export and of eplb plan's
// summary (zhMessages); zh/progress.txt, the progress line's parts
// (zhProgress).
//
//go:embed zh/*.txt
var zhFiles embed.FS

var zhMessages = lang.CatalogOf(zhFiles, "zh/messages.txt")
