"""Makes ``format("xstreams")`` work in every Spark session without a registration call.

PySpark (4.0+) looks, when a session first resolves a data source name, for top-level
modules named ``pyspark_*`` in its Python path that define ``DefaultSource`` (a
``pyspark.sql.datasource.DataSource``) and registers each under its ``name()``
(``pyspark/sql/worker/lookup_data_sources.py``). Installing ``xstreams`` installs this
module beside the ``xstreams`` package, so ``spark.read.format("xstreams")`` and
``spark.readStream``/``writeStream``/``write.format("xstreams")`` just work.
"""

from xstreams.spark import XStreamsDataSource as DefaultSource

__all__ = ["DefaultSource"]
