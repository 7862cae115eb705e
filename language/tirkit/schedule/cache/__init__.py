"""cache_read and cache_write; `placement` decides where the copy goes, `region` what it
holds, `copies` builds the cache buffer and the copy nest."""
