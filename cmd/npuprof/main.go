// Command npuprof turns Huawei Ascend NPU profiler output into measured
// findings and the exact fix. See `npuprof --help`.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
