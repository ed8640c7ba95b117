"""The MySQL dialect: MySQL 8 or MariaDB >= 10.6, many app replicas on one database."""

from orecast.checkpoint.mysql.saver import MysqlCheckpointer

__all__ = ["MysqlCheckpointer"]
