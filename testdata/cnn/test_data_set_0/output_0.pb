
BlogitsJ(Á³X?)H:½l#U?Wgñ?Ê¢¿f>ÀÃûÀf”û=0š[@ü<H¿