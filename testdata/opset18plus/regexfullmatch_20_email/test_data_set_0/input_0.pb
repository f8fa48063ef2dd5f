2info@example.com2a.b+c@sub.example.org2
no-at-sign2x@y.z2UPPER@EXAMPLE.COM2first.last@host.ioBx