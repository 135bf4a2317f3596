"""Render Marquet layers with QGIS, headless, to a PNG (gdal/README.md, "Open it in QGIS").

    QT_QPA_PLATFORM=offscreen GDAL_DRIVER_PATH=gdal/build \\
        /usr/bin/python3 gdal/qgis_render.py natural_earth.h5 out.png

Debian 12's QGIS (apt: python3-qgis qgis-providers) loads each table of the file through
its OGR provider, i.e. through the gdal_Marquet.so plugin, and draws them on one map.
Exits 1 when QGIS cannot load a layer or the image stays empty.
"""

import sys

from qgis.core import (QgsApplication, QgsMapRendererParallelJob, QgsMapSettings, QgsProject,
                       QgsRectangle, QgsVectorLayer)
from qgis.PyQt.QtCore import QSize, Qt
from qgis.PyQt.QtGui import QColor, QImage


def main(path, png):
    app = QgsApplication([], False)
    app.initQgis()
    layers = []
    for table, colour in (("cities", "#c0392b"), ("countries", "#7fb3d5")):
        lyr = QgsVectorLayer(f"{path}|layername={table}", table, "ogr")
        if not lyr.isValid():
            print(f"QGIS cannot load {path} table {table}", file=sys.stderr)
            return 1
        print(f"{table}: {lyr.featureCount()} features, {lyr.crs().authid()}, "
              f"provider {lyr.dataProvider().storageType()}")
        sym = lyr.renderer().symbol()
        sym.setColor(QColor(colour))
        if table == "cities":
            sym.setSize(1.6)
        QgsProject.instance().addMapLayer(lyr)
        layers.append(lyr)
    settings = QgsMapSettings()
    settings.setLayers(layers)
    settings.setBackgroundColor(QColor("white"))
    settings.setOutputSize(QSize(1200, 600))
    settings.setDestinationCrs(layers[1].crs())
    settings.setExtent(QgsRectangle(-180, -90, 180, 90))
    job = QgsMapRendererParallelJob(settings)
    job.start()
    job.waitForFinished()
    img = job.renderedImage()
    # A palette image: a few colours, a small file for the README.
    if not img.convertToFormat(QImage.Format_Indexed8, Qt.ThresholdDither | Qt.AvoidDither).save(png, "png"):
        print(f"cannot write {png}", file=sys.stderr)
        return 1
    # Not blank: some pixels carry the countries' fill colour.
    filled = sum(1 for x in range(0, 1200, 10) for y in range(0, 600, 10) if img.pixelColor(x, y).name() != "#ffffff")
    print(f"{png}: 1200x600, {filled} of 7200 sampled pixels drawn")
    app.exitQgis()
    return 0 if filled > 100 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
