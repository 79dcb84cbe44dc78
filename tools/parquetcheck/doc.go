// Package parquetcheck proves that DuckDB reads npuprof's Parquet export
// and that the SQL in docs/parquet.md gives npuprof's own numbers.
//
// It is a separate module so that npuprof itself stays pure Go: DuckDB's Go
// driver (github.com/duckdb/duckdb-go/v2) links a bundled libduckdb through
// cgo. Run it with `make parquetcheck` (CI runs it from .ci/run).
package parquetcheck
