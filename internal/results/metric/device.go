package metric

import "strings"

// NoDeviceData reports whether a rank, by its metrics and unavailable
// reasons, has no device data at all (neither a device timeline nor
// kernel_details.csv: no compute kernel count), and why, as the passes
// said it.
func NoDeviceData(metrics map[string]float64, unavailable map[string]string) (string, bool) {
	if _, ok := metrics[MetricKernelComputeCount]; ok {
		return "", false
	}
	why := unavailable[MetricKernelComputeCount]
	if why == "" {
		why = "no compute kernel was measured"
	}
	return strings.TrimPrefix(why, "no device data: "), true
}
