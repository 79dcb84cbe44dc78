package parquetio

import (
	"errors"
	"fmt"
	"github.com/npuprof/npuprof/parser/model"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// colFile reads whole columns of one partition file, page by page, from the
// pages' decoded data: no per-row reflection, and a dictionary-encoded
// string column costs one interned string per dictionary entry. The big
// tables (device_tasks, hccl_ops, framework_ops) are read this way; row
// structs (parquet.GenericReader) took longer than parsing the JSON.
type colFile struct {
	path string
	f    *os.File
	pf   *parquet.File
}

func openCols(dir, table string, rank int) (*colFile, error) {
	p := PartFile(dir, table, rank)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (an incomplete export? run npuprof export again)", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: not a Parquet file: %w", p, err)
	}
	return &colFile{path: p, f: f, pf: pf}, nil
}

func (c *colFile) Close() error { return c.f.Close() }

func (c *colFile) rows() int { return int(c.pf.NumRows()) }

// pages calls fn with every page of the named column, in row order.
func (c *colFile) pages(name string, fn func(p parquet.Page) error) error {
	leaf, ok := c.pf.Schema().Lookup(name)
	if !ok {
		return fmt.Errorf("%s: no column %q", c.path, name)
	}
	for _, rg := range c.pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return fmt.Errorf("%s: column %s: %w", c.path, name, err)
			}
			if p.NumNulls() > 0 {
				parquet.Release(p)
				pages.Close()
				return fmt.Errorf("%s: column %s has nulls", c.path, name)
			}
			err = fn(p)
			parquet.Release(p)
			if err != nil {
				pages.Close()
				return err
			}
		}
		pages.Close()
	}
	return nil
}

func (c *colFile) kindErr(name string, p parquet.Page, want string) error {
	return fmt.Errorf("%s: column %s is %v, expected %s", c.path, name, p.Type(), want)
}

// int64s reads an INT64 column.
func (c *colFile) int64s(name string) ([]int64, error) {
	out := make([]int64, 0, c.rows())
	err := c.pages(name, func(p parquet.Page) error {
		if p.Type().Kind() != parquet.Int64 || p.Dictionary() != nil {
			return c.kindErr(name, p, "INT64")
		}
		d := p.Data()
		out = append(out, d.Int64()...)
		return nil
	})
	return out, err
}

// int32s reads an INT32 column.
func (c *colFile) int32s(name string) ([]int32, error) {
	out := make([]int32, 0, c.rows())
	err := c.pages(name, func(p parquet.Page) error {
		if p.Type().Kind() != parquet.Int32 || p.Dictionary() != nil {
			return c.kindErr(name, p, "INT32")
		}
		d := p.Data()
		out = append(out, d.Int32()...)
		return nil
	})
	return out, err
}

// float64s reads a DOUBLE column.
func (c *colFile) float64s(name string) ([]float64, error) {
	out := make([]float64, 0, c.rows())
	err := c.pages(name, func(p parquet.Page) error {
		if p.Type().Kind() != parquet.Double || p.Dictionary() != nil {
			return c.kindErr(name, p, "DOUBLE")
		}
		d := p.Data()
		out = append(out, d.Double()...)
		return nil
	})
	return out, err
}

// strs reads a BYTE_ARRAY (string) column, plain or dictionary-encoded,
// through in (which interns).
func (c *colFile) strs(name string, in func([]byte) string) ([]string, error) {
	return byteArrays(c, name, in)
}

// syms reads a BYTE_ARRAY (string) column into symbols of t.
func (c *colFile) syms(name string, t *model.Syms) ([]model.Sym, error) {
	return byteArrays(c, name, t.InternBytes)
}

// byteArrays reads a BYTE_ARRAY column, plain or dictionary-encoded,
// turning each value into a T with in (once per dictionary entry).
func byteArrays[T any](c *colFile, name string, in func([]byte) T) ([]T, error) {
	out := make([]T, 0, c.rows())
	var dict parquet.Dictionary
	var cache []T
	err := c.pages(name, func(p parquet.Page) error {
		if p.Type().Kind() != parquet.ByteArray {
			return c.kindErr(name, p, "BYTE_ARRAY")
		}
		d := p.Data()
		if pd := p.Dictionary(); pd != nil {
			if pd != dict {
				dict = pd
				cache = make([]T, pd.Len())
				for i := range cache {
					cache[i] = in(pd.Index(int32(i)).ByteArray())
				}
			}
			for _, ix := range d.Int32() {
				if ix < 0 || int(ix) >= len(cache) {
					return fmt.Errorf("%s: column %s: dictionary index %d out of range", c.path, name, ix)
				}
				out = append(out, cache[ix])
			}
			return nil
		}
		data, offs := d.ByteArray()
		for i := 0; i+1 < len(offs); i++ {
			out = append(out, in(data[offs[i]:offs[i+1]]))
		}
		return nil
	})
	return out, err
}
