package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// WriteSecretVolume writes files into dir the way the kubelet updates a
// mounted Secret (its AtomicWriter): the files go into a new hidden
// directory, the symlink "..data" is swapped to it in one rename, and each
// file name is a symlink through "..data". A reader that opened the old file
// keeps it; the next open gets the new one. Nothing in dir is ever written
// in place, which is exactly why a program that watches a file's inode, or
// read it once at start, never sees a Secret change.
func WriteSecretVolume(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	previous, _ := os.Readlink(filepath.Join(dir, "..data"))
	version, err := os.MkdirTemp(dir, ".."+time.Now().UTC().Format("2006_01_02_15_04_05."))
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(version, name), data, 0o644); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(version), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		return fmt.Errorf("swapping ..data: %w", err)
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				return err
			}
		}
	}
	if previous != "" {
		return os.RemoveAll(filepath.Join(dir, previous))
	}
	return nil
}
