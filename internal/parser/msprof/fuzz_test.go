package msprof

import (
	"bytes"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
)

// Fuzz targets for the msprof text readers: errors are fine, panics and
// impossible rows are not. Seeds come from hand-made rows and, for
// communication.json, the generator and the real samples.

func FuzzReadTaskTime(f *testing.F) {
	f.Add([]byte("Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n0,EVENT_WAIT,EVENT_WAIT_SQE,2,1,3.5,\"1736408883704643.212\t\",\"1736408883704646.712\t\"\n0,N/A,AI_CORE,2,2,1,x,y\n"))
	f.Add([]byte("kernel_name,kernel_type,task_start(us)\na,b,1\n"))
	testutil.AddSeedFiles(f, "testdata/broken/*/*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		_, _ = ReadTaskTime(bytes.NewReader(data), "task_time_0.csv", func(r *TaskRow) {})
	})
}

func FuzzReadStatistics(f *testing.F) {
	f.Add([]byte("Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n0,hcom_allReduce_,4,105991.878,1,2,3,100\n"))
	f.Add([]byte("Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\nhost,acl,aclrtMemcpyAsync,1,1,1,1,1,0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		_, _, _ = ReadCommStatistic(bytes.NewReader(data), "communication_statistic_0.csv")
		_, _, _ = ReadAPIStatistic(bytes.NewReader(data), "api_statistic_0.csv")
	})
}

func FuzzReadCommunication(f *testing.F) {
	f.Add([]byte(`{"hcom_allReduce__586_0_1@17522688603477080586":{"Communication Time Info":{"Start Timestamp(us)":1736408883704643.212,"Elapse Time(ms)":1.5}}}`))
	f.Add([]byte(`{"step":{"collective":{},"p2p":{}}}`))
	testutil.AddGeneratedSeeds(f, "communication.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		_, _ = ReadCommunication(bytes.NewReader(data), "communication.json")
	})
}
