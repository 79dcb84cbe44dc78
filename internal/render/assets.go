package render

import _ "embed"

// EChartsVersion is the version of the embedded Apache ECharts build.
const EChartsVersion = "6.1.0"

// echartsJS is Apache ECharts (Apache License 2.0, see
// assets/ECHARTS-LICENSE and assets/ECHARTS-NOTICE), inlined into every
// HTML report so it works with no network.
//
//go:embed assets/echarts.min.js
var echartsJS string

//go:embed assets/ECHARTS-NOTICE
var echartsNotice string
